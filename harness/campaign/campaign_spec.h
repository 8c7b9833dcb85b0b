// What a campaign is (harness/docs/protocol.md#campaigns): workloads × thread points × allocators ×
// blocks, plus how samples are sized (calibration target or a fixed op count) and guarded
// (watchdog). Built-in campaigns `quick` and `headline`, or a JSON file; command-line flags
// override.
//
// JSON form (also embedded in every raw run, so a run is self-describing):
//   {"name": "quick", "workloads": [...], "threads": [1, 2], "allocators": [] (= all),
//    "user_allocators": ["NAME=PATH"], "blocks": 5, "seed": 123, "baseline": "",
//    "target_seconds": [0.1, 0.3], "ops": 0 (= calibrate), "calibration_start_ops": 200000,
//    "timeout_seconds": 60, "verify": false, "memory": true, "return_points_seconds": [0.1, 1, 5],
//    "latency": false, "latency_rate": 0 (= latency_load x calibrated capacity), "latency_load":
//    0.5, "pairs": [["engine-prof", "engine"], ...] (only when any)}
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace heapscope::harness {

// A user error in a campaign (unknown name, bad value, unreadable file).
class CampaignError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A comparison the report makes besides the baseline column (harness/docs/protocol.md#pairs):
// a candidate against a reference of its own, e.g. the profiler's running cost as
// engine-prof against engine. Same paired-block statistics as the baseline effects.
struct ComparisonPair {
  std::string candidate;
  std::string reference;
  bool operator==(const ComparisonPair&) const = default;
};

struct CampaignSpec {
  std::string name;
  std::vector<std::string> workloads;
  std::vector<unsigned> threads;
  std::vector<std::string> allocators;       // ids; empty = every available allocator
  std::vector<std::string> user_allocators;  // "NAME=PATH" additions to the registry
  unsigned blocks = 5;
  std::optional<std::uint64_t> seed;  // unset: a fresh 64-bit seed, recorded in the run
  std::string baseline;               // empty: mimalloc when available, else glibc
  double target_min_seconds = 0.1;    // calibration accepts a sample time in [min, max]
  double target_max_seconds = 0.3;
  std::uint64_t fixed_ops = 0;  // > 0: every cell uses this op count, no calibration
  std::uint64_t calibration_start_ops = 200'000;
  double timeout_seconds = 60;  // watchdog per child
  bool verify = false;          // pass --verify to every child (untimed content checks)
  // The memory protocol (harness/docs/protocol.md#memory): the parent samples each child's
  // RssAnon and reads it again these many seconds after the child has freed everything.
  bool memory = true;
  std::vector<double> return_points_seconds = {0.1, 1, 5};
  // Open-loop per-operation latency (harness/docs/protocol.md#latency), off by default so
  // throughput samples are unchanged. The schedule's rate (stream ops per second, whole cell)
  // is latency_rate when > 0, else latency_load times the capacity the baseline showed in
  // calibration with the per-op timing on.
  bool latency = false;
  double latency_rate = 0;
  double latency_load = 0.5;
  std::vector<ComparisonPair> pairs;
};

// "quick": the README's main job (4 workloads, threads 1 and 2, 5 blocks, ~0.2 s samples, one
// return point at +0.1 s so the job stays short). Sawtooth rather than large-buffers shows
// memory growing and being given back: on large-buffers glibc trims and refaults its heap on
// every buffer (~2,400 ops/s against ~400,000 for the others), so its samples of a stream
// calibrated on the baseline take ~40 s each, 400 s of the main job alone; headline keeps it.
// "quick-latency": the main job's latency run: tiny-hot and general-mix at 1 and 2 threads,
// 5 blocks, open-loop at half the baseline's capacity (latency samples are paced, so their
// throughput is the schedule's: latency and throughput are separate campaigns).
// "headline": every workload, threads 1, 2, 4, 8, 16 (oversubscribed above the host's CPUs,
// marked so), 20 blocks, 0.5–2 s samples. The percentile
// bootstrap of a median covers ~92–94% at 15–21 blocks (stats/README.md), hence 20, not 15.
// "tax": the profilers' costs as pairs (harness/docs/protocol.md#pairs): engine against
// engine-noprof (compiled in, stopped), engine-prof against engine (running, 512 KiB),
// jemalloc-prof against jemalloc and tcmalloc-prof against tcmalloc-full (samplers on at
// 512 KiB), on three workloads at 1 and 2 threads, 11 blocks.
std::optional<CampaignSpec> builtin_campaign(const std::string& name);

// A built-in name or a path to a JSON file. Throws CampaignError.
CampaignSpec load_campaign(const std::string& name_or_path);

nlohmann::ordered_json campaign_to_json(const CampaignSpec& spec);
CampaignSpec campaign_from_json(const nlohmann::ordered_json& j);  // throws CampaignError

// "CANDIDATE:REFERENCE" (the command line's --pair); throws CampaignError.
ComparisonPair parse_pair(const std::string& text);

// Structural checks (non-empty lists, blocks >= 1, positive times); throws CampaignError.
void validate_campaign(const CampaignSpec& spec);

}  // namespace heapscope::harness
