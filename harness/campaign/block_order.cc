#include "harness/campaign/block_order.h"

#include <numeric>
#include <span>

#include "base/fnv1a.h"
#include "base/splitmix64.h"

namespace heapscope::harness {

std::vector<std::vector<std::size_t>> balanced_block_orders(std::size_t allocators,
                                                            std::size_t blocks,
                                                            std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> orders;
  orders.reserve(blocks);
  if (allocators == 0) return std::vector<std::vector<std::size_t>>(blocks);
  base::SplitMix64 rng(seed);
  std::vector<std::size_t> base(allocators);
  std::vector<std::size_t> rotations(allocators);
  while (orders.size() < blocks) {
    std::iota(base.begin(), base.end(), std::size_t{0});
    std::iota(rotations.begin(), rotations.end(), std::size_t{0});
    base::shuffle(std::span<std::size_t>(base), rng);
    base::shuffle(std::span<std::size_t>(rotations), rng);
    for (std::size_t k = 0; k < allocators && orders.size() < blocks; ++k) {
      std::vector<std::size_t> order(allocators);
      for (std::size_t p = 0; p < allocators; ++p) order[p] = base[(p + rotations[k]) % allocators];
      orders.push_back(std::move(order));
    }
  }
  return orders;
}

std::uint64_t block_order_seed(std::uint64_t campaign_seed, const std::string& workload,
                               unsigned threads) {
  const std::string key = "heapscope/block-order/v1/" + workload + "/" + std::to_string(threads);
  return base::splitmix64_mix(base::splitmix64_mix(campaign_seed ^ base::kGolden) ^
                              base::fnv1a64(key));
}

}  // namespace heapscope::harness
