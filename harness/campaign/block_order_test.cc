// The balanced block order (block_order.h): every block a permutation, each allocator at each
// position floor(B/n) or ceil(B/n) times, deterministic in the seed, different across seeds.
#include "harness/campaign/block_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace heapscope::harness {
namespace {

TEST(BlockOrder, EveryBlockIsAPermutation) {
  for (std::size_t n = 1; n <= 8; ++n) {
    for (const auto& order : balanced_block_orders(n, 23, 42)) {
      std::vector<std::size_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i);
    }
  }
}

TEST(BlockOrder, BalancedWithinOne) {
  for (std::size_t n = 1; n <= 8; ++n) {
    for (std::size_t blocks = 1; blocks <= 25; ++blocks) {
      for (std::uint64_t seed = 0; seed < 20; ++seed) {
        const auto orders = balanced_block_orders(n, blocks, seed);
        ASSERT_EQ(orders.size(), blocks);
        std::vector<std::vector<std::size_t>> count(n, std::vector<std::size_t>(n, 0));
        for (const auto& order : orders) {
          for (std::size_t p = 0; p < n; ++p) ++count[order[p]][p];
        }
        for (std::size_t a = 0; a < n; ++a) {
          for (std::size_t p = 0; p < n; ++p) {
            EXPECT_GE(count[a][p], blocks / n) << "n=" << n << " B=" << blocks << " seed=" << seed;
            EXPECT_LE(count[a][p], (blocks + n - 1) / n)
                << "n=" << n << " B=" << blocks << " seed=" << seed;
          }
        }
      }
    }
  }
}

TEST(BlockOrder, SameSeedSameOrdersOtherSeedOtherOrders) {
  EXPECT_EQ(balanced_block_orders(7, 20, 1234), balanced_block_orders(7, 20, 1234));
  EXPECT_NE(balanced_block_orders(7, 20, 1234), balanced_block_orders(7, 20, 1235));
  EXPECT_EQ(block_order_seed(5, "tiny-hot", 1), block_order_seed(5, "tiny-hot", 1));
  EXPECT_NE(block_order_seed(5, "tiny-hot", 1), block_order_seed(5, "tiny-hot", 2));
  EXPECT_NE(block_order_seed(5, "tiny-hot", 1), block_order_seed(6, "tiny-hot", 1));
}

// Not just rotations of one base: over many blocks, many distinct orders appear.
TEST(BlockOrder, OrdersVaryAcrossGroups) {
  const auto orders = balanced_block_orders(4, 40, 99);
  std::set<std::vector<std::size_t>> distinct(orders.begin(), orders.end());
  EXPECT_GT(distinct.size(), 8u);
}

}  // namespace
}  // namespace heapscope::harness
