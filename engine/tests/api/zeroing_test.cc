// The re-zeroing family and hs_expand, against the rules in heapscope.h:
//  * a zeroing allocation zeroes the block's whole usable size;
//  * a re-zeroing call that shrinks in place zeroes the tail it gives up;
//  * so on growth every byte from the old *requested* size to the new size reads zero (and,
//    by the invariant, every byte up to the new usable size), bytes below the old size kept.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <cerrno>
#include <functional>
#include <string>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::check_pattern;
using hs_test::fill_pattern;
using hs_test::first_nonzero;
using hs_test::kKiB;
using hs_test::kMiB;
using hs_test::opaque;

// One re-zeroing API under test: resize(p, n) and a fresh zeroing allocation of n bytes.
struct Family {
  std::string name;
  std::function<void*(void*, size_t)> resize;
  std::function<void*(size_t)> alloc;
  size_t alignment;
};

std::vector<Family> families() {
  return {
      {"rezalloc", [](void* p, size_t n) { return hs_rezalloc(p, n); },
       [](size_t n) { return hs_zalloc(n); }, 16},
      {"recalloc", [](void* p, size_t n) { return hs_recalloc(p, n, 1); },
       [](size_t n) { return hs_calloc(n, 1); }, 16},
      {"recalloc_x4", [](void* p, size_t n) { return hs_recalloc(p, n / 4, 4); },
       [](size_t n) { return hs_calloc(n / 4, 4); }, 16},
      {"rezalloc_aligned", [](void* p, size_t n) { return hs_rezalloc_aligned(p, n, 256); },
       [](size_t n) { return hs_zalloc_aligned(n, 256); }, 256},
      {"recalloc_aligned", [](void* p, size_t n) { return hs_recalloc_aligned(p, n, 1, 4096); },
       [](size_t n) { return hs_calloc_aligned(n, 1, 4096); }, 4096},
  };
}

// Sizes that are multiples of 4 so recalloc_x4 requests exactly n.
constexpr size_t kSteps[] = {100, 1000,     40,  4096, 8,          100 * kKiB,
                             64,  2 * kMiB, 200, 12,   600 * kKiB, 4};

TEST(Rezero, GrowthReadsZeroFromOldRequestedSize) {
  for (const Family& f : families()) {
    SCOPED_TRACE(f.name);
    void* p = f.alloc(kSteps[0]);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(first_nonzero(p, 0, hs_usable_size(p)), SIZE_MAX) << "fresh zeroing alloc";
    size_t size = kSteps[0];
    fill_pattern(p, size, size);
    for (size_t i = 1; i < std::size(kSteps); ++i) {
      const size_t next = kSteps[i];
      SCOPED_TRACE(testing::Message() << size << " -> " << next);
      void* q = f.resize(p, next);
      ASSERT_NE(q, nullptr);
      ASSERT_TRUE(hs_test::is_aligned(q, f.alignment));
      const size_t usable = hs_usable_size(q);
      ASSERT_GE(usable, next);
      const size_t keep = size < next ? size : next;
      EXPECT_EQ(check_pattern(q, keep, size), SIZE_MAX) << "bytes below the old size are kept";
      EXPECT_EQ(first_nonzero(q, keep, usable), SIZE_MAX)
          << "every byte past the requested size reads zero (usable " << usable << ")";
      fill_pattern(q, next, next);
      p = q;
      size = next;
    }
    hs_free(p);
  }
}

TEST(Rezero, ShrinkInPlaceThenGrowReadsZero) {
  // mimalloc-pprof's defect: after an in-place shrink the stale tail comes back on regrowth.
  for (const Family& f : families()) {
    for (size_t big : {size_t{120}, size_t{1000}, 3 * kKiB, 200 * kKiB}) {
      SCOPED_TRACE(testing::Message() << f.name << " " << big);
      void* p = f.alloc(big);
      ASSERT_NE(p, nullptr);
      std::memset(p, 0xAB, big);
      const size_t small = big - 8;  // usually shrinks in place; if it moves, still zero
      void* q = f.resize(p, small);
      ASSERT_NE(q, nullptr);
      std::memset(q, 0xCD, small);
      void* r = f.resize(q, big);
      ASSERT_NE(r, nullptr);
      for (size_t i = 0; i < small; ++i) {
        ASSERT_EQ(static_cast<const unsigned char*>(r)[i], 0xCD) << "kept byte " << i;
      }
      EXPECT_EQ(first_nonzero(r, small, hs_usable_size(r)), SIZE_MAX)
          << "bytes given up by the shrink must read zero after regrowth";
      // And a shrink to a quarter followed by regrowth (may or may not move).
      void* s = f.resize(r, big / 4 / 4 * 4);
      ASSERT_NE(s, nullptr);
      void* t = f.resize(s, big);
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(first_nonzero(t, big / 4 / 4 * 4, hs_usable_size(t)), SIZE_MAX);
      hs_free(t);
    }
  }
}

TEST(Rezero, HugeShrinkKeepingItsMappingThenGrowReadsZero) {
  // A huge block's mapping may extend past its usable size (mappings are made in whole move
  // granules where cached pieces are cut and joined): a shrink that keeps the mapping must
  // still clear what it gives up, as a regrowth into it makes no fresh pages.
  const size_t page = hs_test::page_size();
  for (const Family& f : families()) {
    SCOPED_TRACE(f.name);
    const size_t big = 12 * kMiB;
    const size_t small = 5 * kMiB;  // under half: the mapping shrinks (realloc keeps halves)
    void* p = f.alloc(big);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(hs_usable_size(p), (big + page - 1) / page * page)
        << "a huge block holds its request, page-rounded";
    std::memset(p, 0xAB, big);
    void* q = f.resize(p, small);
    ASSERT_NE(q, nullptr);
    void* r = f.resize(q, big);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(first_nonzero(r, small, hs_usable_size(r)), SIZE_MAX)
        << "bytes given up by the shrink must read zero after regrowth";
    hs_free(r);
  }
}

TEST(Rezero, NullPointerActsAsZeroingAllocation) {
  void* dirty = hs_malloc(500);
  ASSERT_NE(dirty, nullptr);
  std::memset(dirty, 0x77, hs_usable_size(dirty));
  hs_free(dirty);
  for (const Family& f : families()) {
    SCOPED_TRACE(f.name);
    void* p = f.resize(nullptr, 500);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(first_nonzero(p, 0, hs_usable_size(p)), SIZE_MAX);
    hs_free(p);
  }
}

TEST(Rezero, OverflowIsEnomemAndKeepsBlock) {
  void* p = hs_zalloc(64);
  ASSERT_NE(p, nullptr);
  fill_pattern(p, 64, 4);
  errno = 0;
  EXPECT_EQ(hs_recalloc(p, opaque(SIZE_MAX / 2), 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_recalloc_aligned(p, opaque(SIZE_MAX / 2), 3, 16), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_rezalloc(p, opaque(SIZE_MAX)), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(check_pattern(p, 64, 4), SIZE_MAX);
  hs_free(p);
}

TEST(Expand, GrowsWithinUsableSizeAndShrinksInPlace) {
  for (size_t n : {size_t{1}, size_t{100}, size_t{1000}, 20 * kKiB, 300 * kKiB, 4 * kMiB}) {
    SCOPED_TRACE(testing::Message() << "size " << n);
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr);
    fill_pattern(p, n, 6);
    const size_t usable = hs_usable_size(p);
    EXPECT_EQ(hs_expand(p, usable), p);
    EXPECT_GE(hs_usable_size(p), usable);
    EXPECT_EQ(hs_expand(p, n / 2 + 1), p) << "shrinking never needs to move";
    EXPECT_EQ(check_pattern(p, n / 2 + 1, 6), SIZE_MAX);
    hs_free(p);
  }
}

TEST(Expand, ReturnsNullWhenItCannotAndLeavesBlockValid) {
  for (size_t n : {size_t{16}, size_t{100}, 4 * kKiB, 100 * kKiB}) {
    SCOPED_TRACE(testing::Message() << "size " << n);
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr);
    fill_pattern(p, n, 8);
    const size_t usable = hs_usable_size(p);
    EXPECT_EQ(hs_expand(p, opaque(SIZE_MAX)), nullptr);
    EXPECT_EQ(hs_expand(p, 256 * kMiB), nullptr)
        << "growing a " << n << "-byte block in place to 256 MiB";
    EXPECT_EQ(hs_usable_size(p), usable);
    EXPECT_EQ(check_pattern(p, n, 8), SIZE_MAX);
    void* q = hs_realloc(p, 2 * n);  // still a valid, live block
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(check_pattern(q, n, 8), SIZE_MAX);
    hs_free(q);
  }
}

TEST(Expand, SuccessfulGrowthGivesTheRequestedSize) {
  // Whatever the engine manages to grow in place must really be usable.
  for (size_t n : {size_t{100}, 64 * kKiB, 2 * kMiB}) {
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr);
    for (size_t target = n; target <= 4 * n; target += n / 2) {
      void* q = hs_expand(p, target);
      if (q == nullptr) {
        EXPECT_GE(hs_usable_size(p), n);
        continue;
      }
      ASSERT_EQ(q, p);
      ASSERT_GE(hs_usable_size(p), target);
      std::memset(p, 0x3C, target);
    }
    hs_free(p);
  }
}

}  // namespace
