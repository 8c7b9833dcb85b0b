// The stream seed chain (harness/docs/protocol.md#workloads-and-seeds, "heapscope-stream-seed-v1"):
//
//   s = mix(campaign_seed ^ FNV-1a-64("heapscope/stream-seed/v1"))
//   s = mix(s ^ FNV-1a-64(workload name))
//   s = mix(s ^ threads * G);  s = mix(s ^ block * G);  s = mix(s ^ (worker + 1) * G)
//
// mix = splitmix64 output function, G = 0x9e3779b97f4a7c15. Every size, slot, op and
// target of a worker's stream is drawn from SplitMix64(s). The allocator is NOT an
// input: every allocator in a block replays the identical stream.
#pragma once

#include <cstdint>
#include <string_view>

namespace heapscope::workloads {

std::uint64_t stream_seed(std::uint64_t campaign_seed, std::string_view workload, unsigned threads,
                          std::uint64_t block, unsigned worker);

}  // namespace heapscope::workloads
