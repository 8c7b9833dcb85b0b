// Runs one workload at one thread count: materialize every worker's stream (untimed,
// in parallel), time one pass, optionally verify in a second, untimed pass.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stats/log_linear_histogram.h"
#include "workloads/memory_handshake.h"
#include "workloads/region_markers.h"
#include "workloads/stream.h"
#include "workloads/workload.h"

namespace heapscope::workloads {

struct RunConfig {
  const WorkloadSpec* spec = nullptr;
  unsigned threads = 1;
  std::uint64_t ops = 0;  // allocator calls in the timed region, whole cell
  std::uint64_t seed = 0;
  std::uint64_t block = 0;
  bool verify = false;
  // Positive control for the allocation audit: one deliberate harness malloc/free
  // inside the timed region. Never set in campaigns.
  bool plant_harness_alloc = false;
  // Memory protocol (memory_handshake.h): told "replay" just before the first pass and
  // "drained" after the last teardown. Null: no parent listening.
  const MemoryHandshake* handshake = nullptr;
  // Open-loop latency (harness/docs/protocol.md#latency): stream ops per second for the whole
  // cell, each worker scheduled at rate / threads; 0 = unthrottled (each op due when the previous
  // completed: service time, used to measure capacity). Unset: the plain timed pass, no clock.
  std::optional<double> latency_rate = std::nullopt;
};

struct RunResult {
  std::string error;  // empty on success
  std::uint64_t digest = 0;
  std::vector<std::uint64_t> worker_seeds;
  CallCounts calls;  // exactly the allocator calls the timed region makes
  double seconds = 0.0;
  std::uint64_t stream_bytes = 0;
  std::uint64_t peak_live_bytes = 0;  // live_bytes.h
  bool handshake_failed = false;      // the parent stopped answering
  std::uint64_t alloc_failures = 0;
  struct VerifyErrors {
    std::uint64_t content = 0, misaligned = 0, calloc_not_zero = 0;
    std::uint64_t leaked = 0;            // teardown left a block in a slot
    std::uint64_t handoff_mismatch = 0;  // blocks sent != blocks received (by tag)
    std::uint64_t total() const {
      return content + misaligned + calloc_not_zero + leaked + handoff_mismatch;
    }
  };
  bool verified = false;
  VerifyErrors verify;
  unsigned threads_created_in_region = 0;  // thread-churn only
  std::optional<hs_shim_counts> shim;      // when the audit shim is preloaded
  // Latency runs: every worker's histogram merged (ns from intended start to completion).
  std::optional<stats::LogLinearHistogram> latency;
};

// Streams only (no allocator calls beyond the generator's bookkeeping): for digests in
// tests and `--digest-only`.
struct Materialized {
  std::vector<Stream> streams;
  std::vector<std::uint64_t> seeds;
  std::uint64_t digest = 0;
  CallCounts calls;
};
Materialized materialize(const WorkloadSpec& spec, unsigned threads, std::uint64_t ops,
                         std::uint64_t seed, std::uint64_t block);

RunResult run_workload(const RunConfig& config);

}  // namespace heapscope::workloads
