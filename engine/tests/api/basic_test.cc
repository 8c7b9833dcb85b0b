// hs_malloc / hs_zalloc / hs_calloc / hs_realloc / hs_reallocarray / hs_free / hs_free_sized /
// hs_usable_size: edge sizes, errno on failure, malloc(0), realloc in place and moving.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <cerrno>
#include <cstdint>
#include <set>
#include <vector>

#include "../support/test_support.h"

// The hardened build's copy of these tests (hs_api_hardened_tests) defines it as 1.
#ifndef HS_TEST_HARDENED
#define HS_TEST_HARDENED 0
#endif

namespace {

using hs_test::check_pattern;
using hs_test::fill_pattern;
using hs_test::kKiB;
using hs_test::kMiB;
using hs_test::opaque;

// 0, 1, small odd sizes, and every power of two and quarter step (2^k + j*2^(k-2)) +-1 up to
// 64 MiB: the engine's size-class boundaries are among these whatever its class table is.
std::vector<size_t> edge_sizes() {
  std::set<size_t> sizes = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 100, 127, 129};
  for (size_t k = 3; k <= 26; ++k) {
    const size_t base = size_t{1} << k;
    for (size_t j = 0; j < 4; ++j) {
      const size_t s = base + j * (base >> 2);
      if (s > 64 * kMiB) break;
      sizes.insert(s - 1);
      sizes.insert(s);
      if (s + 1 <= 64 * kMiB) sizes.insert(s + 1);
    }
  }
  return {sizes.begin(), sizes.end()};
}

TEST(Malloc, EdgeSizesAreUsableAndAligned) {
  for (size_t n : edge_sizes()) {
    SCOPED_TRACE(testing::Message() << "size " << n);
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr);
    const size_t usable = hs_usable_size(p);
    EXPECT_GE(usable, n);
    EXPECT_GE(usable, size_t{1});  // malloc(0) still gives a block
    EXPECT_TRUE(hs_test::is_aligned(p, n >= 16 ? alignof(std::max_align_t) : 8)) << p;
    EXPECT_TRUE(hs_is_in_heap_region(p));
    fill_pattern(p, usable, n);
    EXPECT_EQ(check_pattern(p, usable, n), SIZE_MAX);
    hs_free(p);
  }
}

// Two live blocks of n bytes, both written over their whole usable size: a block smaller than
// asked, or one that overlaps its neighbour, shows up as a broken pattern.
void check_two_live_blocks(size_t n) {
  void* a = hs_malloc(n);
  void* b = hs_malloc(n);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(a, b);
  const size_t ua = hs_usable_size(a);
  const size_t ub = hs_usable_size(b);
  ASSERT_GE(ua, n) << "size " << n;
  ASSERT_GE(ub, n) << "size " << n;
  fill_pattern(a, ua, 1);
  fill_pattern(b, ub, 2);
  ASSERT_EQ(check_pattern(a, ua, 1), SIZE_MAX) << "size " << n;
  ASSERT_EQ(check_pattern(b, ub, 2), SIZE_MAX) << "size " << n;
  hs_free(b);
  hs_free(a);
}

TEST(Malloc, EverySizeUpTo4KiBKeepsItsBytes) {
  for (size_t n = 0; n <= 4 * kKiB; ++n) ASSERT_NO_FATAL_FAILURE(check_two_live_blocks(n));
}

TEST(Malloc, SizesAcrossEveryMediumTableSlotGetTheirClass) {
  // Above 2 KiB the fast path finds pages by (size+255)/256 (below, by (size+15)/16): probe
  // each slot's edges from 1 KiB up to 64 KiB and past it. A wrong slot shows as a block too small
  // (usable < size), or as one of a class too big (more than the 25% rounding of four classes per
  // power of two).
  for (size_t edge = kKiB; edge <= 64 * kKiB + 512; edge += 256) {
    for (size_t n = edge - 1; n <= edge + 1; ++n) {
      void* p = hs_malloc(n);
      ASSERT_NE(p, nullptr);
      ASSERT_LE(hs_usable_size(p), n + n / 4) << "size " << n;
      hs_free(p);
      ASSERT_NO_FATAL_FAILURE(check_two_live_blocks(n));
    }
  }
}

TEST(Malloc, ZeroReturnsUniqueFreeablePointers) {
  std::vector<void*> blocks;
  std::set<void*> seen;
  for (int i = 0; i < 1000; ++i) {
    void* p = hs_malloc(0);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(seen.insert(p).second) << "hs_malloc(0) returned " << p << " twice";
    blocks.push_back(p);
  }
  for (void* p : blocks) hs_free(p);
}

TEST(Malloc, SizeMaxFailsWithEnomem) {
  for (size_t n : {SIZE_MAX, SIZE_MAX - 4095, SIZE_MAX / 2 + 1, size_t{PTRDIFF_MAX} + 1}) {
    SCOPED_TRACE(testing::Message() << "size " << n);
    errno = 0;
    EXPECT_EQ(hs_malloc(opaque(n)), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(hs_zalloc(opaque(n)), nullptr);
    EXPECT_EQ(errno, ENOMEM);
  }
}

TEST(Malloc, FreeNullIsANoOp) {
  const hs_stats_t before = hs_test::stats_now();
  hs_free(nullptr);
  hs_free_sized(nullptr, 0);
  const hs_stats_t after = hs_test::stats_now();
  EXPECT_EQ(after.free_count, before.free_count);
  EXPECT_EQ(hs_usable_size(nullptr), 0u);
}

// free's fast path sends NULL, addresses in the first 32 MiB and addresses beyond 47-bit user
// space through one test to the unusual path: none of them is ours, so each is ignored.
TEST(Malloc, FreeOfAddressesOutsideTheSegmentMapIsIgnored) {
  if (HS_TEST_HARDENED) GTEST_SKIP() << "the hardened build checks every free (test below)";
  hs_test::ScopedOption not_checking(hs_option_check_frees, 0);
  const hs_stats_t before = hs_test::stats_now();
  for (uintptr_t address :
       {uintptr_t{0x1000}, uintptr_t{1} << 47, uintptr_t{0x7ff} << 52, ~uintptr_t{0xfff}}) {
    SCOPED_TRACE(testing::Message() << "address " << std::hex << address);
    hs_free(opaque(reinterpret_cast<void*>(address)));
    EXPECT_EQ(hs_usable_size(reinterpret_cast<void*>(address)), 0u);
  }
  const hs_stats_t after = hs_test::stats_now();
  EXPECT_EQ(after.free_count, before.free_count);
  check_two_live_blocks(64);
}

TEST(MallocDeathTest, FreeOfAnAddressBeyondUserSpaceIsFatalWhenCheckingFrees) {
  EXPECT_DEATH(
      {
        hs_option_set(hs_option_check_frees, 1);
        hs_free(opaque(reinterpret_cast<void*>(uintptr_t{1} << 50)));
      },
      "does not own");
}

TEST(Malloc, FreeSizedFreesTheBlock) {
  const hs_stats_t before = hs_test::stats_now();
  for (size_t n : {size_t{1}, size_t{100}, 5 * kKiB, 300 * kKiB, 3 * kMiB}) {
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr);
    hs_free_sized(p, n);
  }
  const hs_stats_t after = hs_test::stats_now();
  EXPECT_EQ(after.free_count - before.free_count, 5u);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
}

TEST(Calloc, OverflowFailsWithEnomem) {
  const size_t cases[][2] = {{SIZE_MAX / 2, 3},
                             {size_t{1} << 33, size_t{1} << 33},
                             {SIZE_MAX, SIZE_MAX},
                             {3, SIZE_MAX / 2},
                             {SIZE_MAX, 1}};
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c[0] << " x " << c[1]);
    errno = 0;
    EXPECT_EQ(hs_calloc(opaque(c[0]), opaque(c[1])), nullptr);
    EXPECT_EQ(errno, ENOMEM);
  }
}

TEST(Calloc, ZeroesReusedDirtyMemory) {
  // Dirty blocks of each size, free them, then calloc the same sizes: the allocator will hand
  // back (some of) the dirty blocks, which must read zero over the whole usable size.
  for (size_t n : {size_t{8}, size_t{16}, size_t{100}, size_t{1000}, 4 * kKiB, 40 * kKiB,
                   300 * kKiB, 2 * kMiB}) {
    SCOPED_TRACE(testing::Message() << "size " << n);
    std::vector<void*> dirty;
    for (int i = 0; i < 8; ++i) {
      void* p = hs_malloc(n);
      ASSERT_NE(p, nullptr);
      std::memset(p, 0xEE, hs_usable_size(p));
      dirty.push_back(p);
    }
    for (void* p : dirty) hs_free(p);
    for (int i = 0; i < 8; ++i) {
      void* c = hs_calloc(1, n);
      ASSERT_NE(c, nullptr);
      EXPECT_EQ(hs_test::first_nonzero(c, 0, hs_usable_size(c)), SIZE_MAX);
      void* z = hs_zalloc(n);
      ASSERT_NE(z, nullptr);
      EXPECT_EQ(hs_test::first_nonzero(z, 0, hs_usable_size(z)), SIZE_MAX);
      hs_free(c);
      hs_free(z);
    }
  }
}

TEST(Calloc, ZeroCountOrSizeGivesUniqueBlock) {
  void* a = hs_calloc(0, 16);
  void* b = hs_calloc(16, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  hs_free(a);
  hs_free(b);
}

TEST(Realloc, NullActsAsMalloc) {
  const hs_stats_t before = hs_test::stats_now();
  void* p = hs_realloc(nullptr, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(hs_usable_size(p), 100u);
  EXPECT_EQ(hs_test::stats_now().alloc_count - before.alloc_count, 1u);
  hs_free(p);
  void* q = hs_reallocarray(nullptr, 10, 10);
  ASSERT_NE(q, nullptr);
  EXPECT_GE(hs_usable_size(q), 100u);
  hs_free(q);
}

TEST(Realloc, ZeroSizeFreesAndReturnsNull) {
  void* p = hs_malloc(100);
  ASSERT_NE(p, nullptr);
  const size_t usable = hs_usable_size(p);
  const hs_stats_t before = hs_test::stats_now();
  EXPECT_EQ(hs_realloc(p, 0), nullptr);
  const hs_stats_t after = hs_test::stats_now();
  EXPECT_EQ(after.free_count - before.free_count, 1u);
  EXPECT_EQ(before.allocated_bytes - after.allocated_bytes, usable)
      << "realloc(p, 0) must release the block's usable size";
}

TEST(Realloc, WithinUsableSizeStaysInPlace) {
  for (size_t n : {size_t{1}, size_t{24}, size_t{100}, size_t{1000}, 10 * kKiB, 100 * kKiB,
                   1 * kMiB, 5 * kMiB}) {
    SCOPED_TRACE(testing::Message() << "size " << n);
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr);
    const size_t usable = hs_usable_size(p);
    fill_pattern(p, n, 7);
    void* q = hs_realloc(p, usable);
    ASSERT_EQ(q, p) << "growing to the usable size must not move";
    EXPECT_EQ(check_pattern(q, n, 7), SIZE_MAX);
    hs_free(q);
  }
}

TEST(Realloc, GrowingAndShrinkingKeepContents) {
  // Each step moves across small, medium, large and huge blocks and back; the common prefix
  // must survive every step whether the block moved or not.
  const size_t steps[] = {
      1,          16,       17,        200, 4096,     4097, 64 * kKiB, 64 * kKiB + 1,
      600 * kKiB, 3 * kMiB, 20 * kMiB, 100, 5 * kMiB, 33,   2 * kMiB,  1};
  void* p = nullptr;
  size_t size = 0;
  uint64_t seed = 1;
  for (size_t next : steps) {
    SCOPED_TRACE(testing::Message() << size << " -> " << next);
    void* q = hs_realloc(p, next);
    ASSERT_NE(q, nullptr);
    ASSERT_GE(hs_usable_size(q), next);
    const size_t keep = size < next ? size : next;
    if (keep > 0) {
      EXPECT_EQ(check_pattern(q, keep, seed), SIZE_MAX);
    }
    ++seed;
    fill_pattern(q, next, seed);
    p = q;
    size = next;
  }
  hs_free(p);
}

TEST(Realloc, FailureLeavesBlockIntact) {
  void* p = hs_malloc(256);
  ASSERT_NE(p, nullptr);
  fill_pattern(p, 256, 3);
  errno = 0;
  EXPECT_EQ(hs_realloc(p, opaque(SIZE_MAX)), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_reallocarray(p, opaque(SIZE_MAX / 2), 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_reallocarray(p, opaque(size_t{1} << 40), size_t{1} << 30), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(check_pattern(p, 256, 3), SIZE_MAX);
  void* q = hs_reallocarray(p, 100, 10);
  ASSERT_NE(q, nullptr);
  EXPECT_GE(hs_usable_size(q), 1000u);
  EXPECT_EQ(check_pattern(q, 256, 3), SIZE_MAX);
  hs_free(q);
}

TEST(Malloc, UsableSizeOfInteriorBlocksIsStable) {
  // usable_size is a property of the block: the same after unrelated traffic.
  void* p = hs_malloc(777);
  ASSERT_NE(p, nullptr);
  const size_t u = hs_usable_size(p);
  std::vector<void*> noise;
  noise.reserve(1000);
  for (int i = 0; i < 1000; ++i) noise.push_back(hs_malloc(static_cast<size_t>(i) % 900 + 1));
  for (void* x : noise) hs_free(x);
  EXPECT_EQ(hs_usable_size(p), u);
  hs_free(p);
}

}  // namespace
