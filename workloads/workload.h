// What a workload is: documentation fields (shown by `hs-workload --list`, the README
// table and the site) plus a generator that materializes one worker's op stream.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/splitmix64.h"
#include "workloads/stream.h"

namespace heapscope::workloads {

enum class Topology {
  kLocal,        // each worker frees what it allocated
  kCrossThread,  // blocks travel through bounded SPSC queues and are freed by the receiver
  kChurn,        // threads are created and retired inside the timed region
};

struct GenContext {
  base::SplitMix64& rng;
  unsigned worker, threads;
  std::uint64_t total_ops;  // allocator calls for the whole cell (all workers)
  StreamWriter& out;
};

struct WorkloadSpec {
  std::string_view name;
  std::string_view summary, sizes, op_mix, live_set, threads_note;
  Topology topology;
  std::uint32_t queue_capacity;  // per (producer, consumer) pair; 0 for local workloads
  // Upper bound of ops this worker emits (setup + timed + teardown) for a cell of total_ops.
  std::uint64_t (*capacity)(std::uint64_t total_ops, unsigned threads);
  void (*generate)(GenContext&);
};

std::span<const WorkloadSpec> all_workloads();
const WorkloadSpec* find_workload(std::string_view name);  // nullptr if unknown

// This worker's share of `total` split across `parts` (the first total % parts get one more).
inline std::uint64_t share(std::uint64_t total, unsigned parts, unsigned index) {
  return total / parts + (index < total % parts ? 1 : 0);
}

}  // namespace heapscope::workloads
