// The raw-run JSON ("heapscope.raw-run", schema_version 4): everything a campaign measured and
// everything needed to re-run any sample. Written by `hsbench run` and `hsbench merge`, read by
// `report`, `reproduce` and `run --resume`.
//
//   {"schema", "schema_version", "tool", "created", "complete",
//    "campaign": campaign_to_json, "seed", "seed_hex", "baseline", "workload_program",
//    "block_order_method", "hosts": [host_info], "allocators": [allocator_to_json],
//    "calibration": [{"workload","threads","allocator","status","ops","attempts":[...]}],
//    "orders": [{"workload","threads","block","order":[ids]}],
//    "samples": [{"id","workload","threads","block","position","allocator","argv","env",
//                 "seeds":{"campaign","block"},"host","status":"ok"|"failed",
//                 "failure":{"kind","reason",...}?, "wall_seconds", "measurement": child JSON?,
//                 "memory": MemorySampler::to_json (memory_sampler.h)?}]}
//
// Version 2 added the memory protocol (each sample's "memory", the campaign's "memory" and
// "return_points_seconds"); version 3 the latency protocol (the campaign's "latency" fields, the
// calibration's latency rate, each latency sample's measurement "latency": p50/p99/p99.9/max ns
// and count); version 4 each memory record's bounded RSS "timeline" and "drained_at_seconds".
// Versions 1 to 3 still load, report and publish, without memory / latency / timelines.
//
// Sample ids are "<workload>/t<threads>/b<block>/<allocator>", unique within a run.
// Files are replaced atomically (temp file + rename), so a reader never sees half a file.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace heapscope::harness {

using Json = nlohmann::ordered_json;

inline constexpr const char* kRawRunSchema = "heapscope.raw-run";
inline constexpr int kRawRunSchemaVersion = 4;
inline constexpr int kRawRunOldestSchemaVersion = 1;

class RawRunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string sample_id(const std::string& workload, unsigned threads, std::uint64_t block,
                      const std::string& allocator);

// Reads and checks schema, version and the fields every reader relies on. Throws RawRunError
// with a message naming the file and what is wrong.
Json load_raw_run(const std::string& path);

// Reads any JSON file (job files, results); throws RawRunError.
Json load_json_file(const std::string& path);

// Writes `j` to `path` via a temporary file in the same directory and rename(2). Throws
// RawRunError when it cannot.
void write_json_atomic(const std::string& path, const Json& j);

// The sample with this id, or nullptr.
const Json* find_sample(const Json& raw, const std::string& id);

}  // namespace heapscope::harness
