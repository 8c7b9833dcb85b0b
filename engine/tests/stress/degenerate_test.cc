// The single-threaded half of the degenerate suite (engine/docs/design.md#how-it-is-tested):
// sawtooth live sets, fragmentation then large blocks, every size class with +-1 probes, realloc
// ping-pong across size boundaries, and 2-32 MiB huge churn. Contents are checked everywhere; RSS
// bounds are skipped under sanitizers (their shadow memory and quarantine make RSS meaningless).
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <algorithm>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::check_pattern;
using hs_test::fill_pattern;
using hs_test::kKiB;
using hs_test::kMiB;
using hs_test::rss_bytes;
using hs_test::scaled;
using hs_test::SplitMix64;
using hs_test::stats_now;

struct Block {
  void* p;
  size_t size;
  uint64_t seed;
};

void free_checked(const Block& b) {
  ASSERT_EQ(check_pattern(b.p, b.size, b.seed), SIZE_MAX)
      << "block of " << b.size << " bytes at " << b.p << " was overwritten";
  hs_free(b.p);
}

// Mostly small, some medium, a few large.
size_t mixed_size(SplitMix64& rng) {
  const uint64_t r = rng.next() % 100;
  if (r < 70) return rng.between(1, 512);
  if (r < 95) return rng.between(513, 16 * kKiB);
  return rng.between(16 * kKiB + 1, 256 * kKiB);
}

TEST(Degenerate, SawtoothKeepsRssBounded) {
  // Grow the live set to ~64 MiB, drain it, five times over: the peak of a later cycle must not
  // climb past the first cycle's (the memory freed by a drain is reused, not leaked).
  const size_t target = (hs_test::kSanitized ? 16 : 64) * kMiB;
  const int cycles = static_cast<int>(std::min<size_t>(scaled(5), 40));
  const hs_stats_t start = stats_now();
  SplitMix64 rng(11);
  size_t first_peak = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    std::vector<Block> live;
    size_t bytes = 0;
    uint64_t seed = 0;
    while (bytes < target) {
      const size_t n = mixed_size(rng);
      void* p = hs_malloc(n);
      ASSERT_NE(p, nullptr);
      fill_pattern(p, n, ++seed);
      live.push_back({p, n, seed});
      bytes += n;
      // A little churn inside the growth phase.
      if (live.size() > 16 && rng.next() % 4 == 0) {
        const size_t i = rng.next() % live.size();
        bytes -= live[i].size;
        ASSERT_NO_FATAL_FAILURE(free_checked(live[i]));
        live[i] = live.back();
        live.pop_back();
      }
    }
    const size_t peak = rss_bytes();
    if (cycle == 0) first_peak = peak;
    // Drain in an order unrelated to allocation order.
    for (size_t i = live.size(); i > 1; --i) std::swap(live[i - 1], live[rng.next() % i]);
    for (const Block& b : live) ASSERT_NO_FATAL_FAILURE(free_checked(b));
    EXPECT_EQ(stats_now().allocated_bytes, start.allocated_bytes) << "cycle " << cycle;
    if (!hs_test::kSanitized) {
      EXPECT_LE(peak, first_peak + first_peak / 10 + 8 * kMiB)
          << "cycle " << cycle << ": peak RSS " << peak << " vs first cycle " << first_peak;
    }
  }
}

TEST(Degenerate, FragmentationThenLarge) {
  // Many small blocks, every other one freed (a heap full of holes no large block fits in),
  // then large and huge blocks: they must come out right and not disturb the survivors.
  const size_t count = scaled(200000);
  const hs_stats_t start = stats_now();
  SplitMix64 rng(12);
  std::vector<Block> small;
  small.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t n = rng.between(8, 256);
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr);
    fill_pattern(p, n, i);
    small.push_back({p, n, i});
  }
  std::vector<Block> survivors;
  for (size_t i = 0; i < small.size(); ++i) {
    if (i % 2 == 0) {
      ASSERT_NO_FATAL_FAILURE(free_checked(small[i]));
    } else {
      survivors.push_back(small[i]);
    }
  }
  std::vector<Block> large;
  for (size_t i = 0; i < 48; ++i) {
    const size_t n =
        i % 8 == 7 ? rng.between(2 * kMiB, 8 * kMiB) : rng.between(64 * kKiB, 1 * kMiB);
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr);
    fill_pattern(p, n, 1000000 + i);
    large.push_back({p, n, 1000000 + i});
  }
  // Refill the holes with other small sizes while the large blocks are live.
  std::vector<Block> refill;
  for (size_t i = 0; i < count / 2; ++i) {
    const size_t n = rng.between(8, 128);
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr);
    fill_pattern(p, n, 2000000 + i);
    refill.push_back({p, n, 2000000 + i});
  }
  for (const Block& b : survivors) ASSERT_NO_FATAL_FAILURE(free_checked(b));
  for (const Block& b : large) ASSERT_NO_FATAL_FAILURE(free_checked(b));
  for (const Block& b : refill) ASSERT_NO_FATAL_FAILURE(free_checked(b));
  const hs_stats_t end = stats_now();
  EXPECT_EQ(end.allocated_bytes, start.allocated_bytes);
  EXPECT_EQ(end.alloc_count - start.alloc_count, end.free_count - start.free_count);
}

TEST(Degenerate, EverySizeClassWithPlusMinusOneProbes) {
  // Walk the size classes by usable size: for a request n the block's usable size u is the top
  // of n's class, so u and u+1 straddle a class boundary. Probe u-1, u, u+1 with several live
  // blocks each, written over their whole usable size, and check every neighbour afterwards.
  const size_t limit = 16 * kMiB;
  size_t classes = 0;
  size_t n = 1;
  while (n <= limit) {
    void* first = hs_malloc(n);
    ASSERT_NE(first, nullptr);
    const size_t u = hs_usable_size(first);
    ASSERT_GE(u, n);
    hs_free(first);
    ++classes;
    std::vector<Block> live;
    const int per_size = u <= 64 * kKiB ? 6 : 2;
    for (size_t probe : {u - 1, u, u + 1}) {
      if (probe == 0) continue;
      for (int k = 0; k < per_size; ++k) {
        void* p = hs_malloc(probe);
        ASSERT_NE(p, nullptr) << "size " << probe;
        const size_t usable = hs_usable_size(p);
        ASSERT_GE(usable, probe);
        if (probe <= u) {
          EXPECT_EQ(usable, u) << "sizes " << probe << " and " << n << " are in one class";
        } else {
          EXPECT_GT(usable, u) << "size " << probe << " is past the class of " << n;
        }
        fill_pattern(p, usable, live.size() + probe);
        live.push_back({p, usable, live.size() + probe});
      }
    }
    for (const Block& b : live) ASSERT_NO_FATAL_FAILURE(free_checked(b));
    // The next class; past 1 MiB step faster (page-granular classes would take thousands).
    n = u + 1;
    if (u > 1 * kMiB) n = std::max(u + 1, u + u / 8);
  }
  EXPECT_GE(classes, 40u) << "too few size classes below 16 MiB";
}

TEST(Degenerate, ReallocPingPongAcrossBoundaries) {
  // One block bounced between small, medium, large and huge sizes, each step chosen around a
  // class boundary; the common prefix is checked after every step.
  std::vector<size_t> boundaries;
  for (size_t n = 8; n <= 32 * kMiB; n *= 2) boundaries.push_back(n);
  SplitMix64 rng(13);
  const size_t steps = scaled(3000);
  size_t size = 100;
  uint64_t seed = 1;
  void* p = hs_malloc(size);
  ASSERT_NE(p, nullptr);
  fill_pattern(p, size, seed);
  for (size_t step = 0; step < steps; ++step) {
    size_t base = boundaries[rng.next() % boundaries.size()];
    // Keep most steps below 1 MiB so the test stays quick, but visit huge sizes too.
    if (base > 1 * kMiB && rng.next() % 8 != 0) base = boundaries[rng.next() % 10];
    const size_t next = base - 1 + rng.next() % 3;  // base-1, base or base+1
    void* q = hs_realloc(p, next);
    ASSERT_NE(q, nullptr) << "step " << step << ": " << size << " -> " << next;
    ASSERT_GE(hs_usable_size(q), next);
    const size_t keep = std::min(size, next);
    ASSERT_EQ(check_pattern(q, keep, seed), SIZE_MAX)
        << "step " << step << ": " << size << " -> " << next;
    fill_pattern(q, next, ++seed);
    p = q;
    size = next;
  }
  hs_free(p);
}

TEST(Degenerate, HugeChurn2To32MiB) {
  // Huge blocks of 2-32 MiB, four live at a time, replaced at random: contents survive, the
  // huge count returns to where it was, and RSS stays near the live set (plus any cache).
  const hs_stats_t start = stats_now();
  SplitMix64 rng(14);
  const size_t rounds = std::min<size_t>(scaled(160), 1200);
  Block live[4] = {};
  size_t peak_live = 0;
  size_t max_rss = 0;
  uint64_t max_huge = 0;
  const size_t rss_start = rss_bytes();
  for (size_t r = 0; r < rounds; ++r) {
    Block& slot = live[rng.next() % 4];
    if (slot.p != nullptr) {
      ASSERT_NO_FATAL_FAILURE(free_checked(slot));
    }
    const size_t n = rng.between(2 * kMiB, 32 * kMiB);
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr) << "round " << r << " size " << n;
    fill_pattern(p, n, r + 1);
    slot = {p, n, r + 1};
    size_t live_bytes = 0;
    for (const Block& b : live) live_bytes += b.p ? b.size : 0;
    peak_live = std::max(peak_live, live_bytes);
    max_rss = std::max(max_rss, rss_bytes());
    max_huge = std::max(max_huge, stats_now().huge_count);
  }
  EXPECT_GE(max_huge, start.huge_count + 1) << "blocks over 16 MiB are huge mappings";
  for (Block& b : live) {
    if (b.p != nullptr) {
      ASSERT_NO_FATAL_FAILURE(free_checked(b));
    }
  }
  const hs_stats_t end = stats_now();
  EXPECT_EQ(end.huge_count, start.huge_count);
  EXPECT_EQ(end.allocated_bytes, start.allocated_bytes);
  if (!hs_test::kSanitized) {
    // fill_pattern touches a fraction of each page only at 64 B granularity, but every page:
    // resident memory is the live set, plus freed memory kept for reuse (huge mappings in the
    // cache, large spans not yet purged: each bounded by its option), plus slack.
    const size_t cache =
        static_cast<size_t>(std::max(0L, hs_option_get(hs_option_huge_cache_bytes)));
    const size_t dirty =
        static_cast<size_t>(std::max(0L, hs_option_get(hs_option_dirty_max_bytes)));
    EXPECT_LE(max_rss, rss_start + peak_live + cache + dirty + 32 * kMiB)
        << "peak live " << peak_live << " cache option " << cache << " dirty option " << dirty;
  }
}

}  // namespace
