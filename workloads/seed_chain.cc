#include "workloads/seed_chain.h"

#include "base/fnv1a.h"
#include "base/splitmix64.h"

namespace heapscope::workloads {

std::uint64_t stream_seed(std::uint64_t campaign_seed, std::string_view workload, unsigned threads,
                          std::uint64_t block, unsigned worker) {
  using base::fnv1a64;
  using base::kGolden;
  using base::splitmix64_mix;
  std::uint64_t s = splitmix64_mix(campaign_seed ^ fnv1a64("heapscope/stream-seed/v1"));
  s = splitmix64_mix(s ^ fnv1a64(workload));
  s = splitmix64_mix(s ^ (std::uint64_t{threads} * kGolden));
  s = splitmix64_mix(s ^ (block * kGolden));
  // worker + 1 so that worker 0 still changes the state.
  return splitmix64_mix(s ^ ((std::uint64_t{worker} + 1) * kGolden));
}

}  // namespace heapscope::workloads
