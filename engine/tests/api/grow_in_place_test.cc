// Growth without copying: a one-block (large) page takes the free slices after it, a block
// that realloc grows into the upper medium classes moves once onto a slice of its own and
// grows there, and a huge block's mapping grows or moves by remapping pages. Contents, zeroing
// rules, statistics and the segment map must come out as a moving realloc leaves them.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::check_pattern;
using hs_test::fill_pattern;
using hs_test::kKiB;
using hs_test::kMiB;
using hs_test::on_fresh_thread;
using hs_test::stats_now;

TEST(LargeGrowth, ReallocTakesTheFreeSlicesAfterTheBlock) {
  on_fresh_thread([] {
    const hs_stats_t before = stats_now();
    size_t size = 100 * kKiB;
    auto* p = static_cast<unsigned char*>(hs_malloc(size));
    ASSERT_NE(p, nullptr);
    fill_pattern(p, size, 11);
    int steps = 0;
    // Up to 4 MiB: beyond, a block is a huge mapping (resized with mremap, see below).
    for (size_t next : {300 * kKiB, 1 * kMiB, 3 * kMiB, 4 * kMiB}) {
      auto* q = static_cast<unsigned char*>(hs_realloc(p, next));
      ASSERT_NE(q, nullptr);
      EXPECT_EQ(q, p) << "growth to " << next << " should have stayed in place";
      ASSERT_EQ(check_pattern(q, size, 11), SIZE_MAX) << "growth to " << next;
      EXPECT_GE(hs_usable_size(q), next);
      fill_pattern(q, next, 11);
      p = q;
      size = next;
      ++steps;
    }
    const hs_stats_t grown = stats_now();
    EXPECT_EQ(grown.alloc_count - before.alloc_count, static_cast<uint64_t>(steps) + 1);
    EXPECT_EQ(grown.free_count - before.free_count, static_cast<uint64_t>(steps));
    EXPECT_EQ(grown.allocated_bytes - before.allocated_bytes, hs_usable_size(p));
    hs_free(p);
    EXPECT_EQ(stats_now().allocated_bytes, before.allocated_bytes);
  });
}

TEST(LargeGrowth, ANeighbourAfterTheBlockForcesACopy) {
  on_fresh_thread([] {
    auto* p = static_cast<unsigned char*>(hs_malloc(100 * kKiB));
    void* neighbour = hs_malloc(100 * kKiB);  // first fit: the slices right after p
    ASSERT_TRUE(p != nullptr && neighbour != nullptr);
    fill_pattern(p, 100 * kKiB, 12);
    EXPECT_EQ(hs_expand(p, 1 * kMiB), nullptr) << "the neighbour holds the slices";
    EXPECT_EQ(check_pattern(p, 100 * kKiB, 12), SIZE_MAX);
    auto* q = static_cast<unsigned char*>(hs_realloc(p, 1 * kMiB));
    ASSERT_NE(q, nullptr);
    EXPECT_NE(q, p);
    EXPECT_EQ(check_pattern(q, 100 * kKiB, 12), SIZE_MAX);
    hs_free(q);
    hs_free(neighbour);
  });
}

TEST(LargeGrowth, ExpandGrowsInPlaceOrSaysNo) {
  on_fresh_thread([] {
    auto* p = static_cast<unsigned char*>(hs_malloc(200 * kKiB));
    ASSERT_NE(p, nullptr);
    fill_pattern(p, 200 * kKiB, 13);
    EXPECT_EQ(hs_expand(p, 2 * kMiB), p);
    EXPECT_GE(hs_usable_size(p), 2 * kMiB);
    EXPECT_EQ(check_pattern(p, 200 * kKiB, 13), SIZE_MAX);
    p[2 * kMiB - 1] = 1;
    EXPECT_EQ(hs_expand(p, 40 * kMiB), nullptr) << "large to huge always moves";
    hs_free(p);
  });
}

TEST(LargeGrowth, ZeroingGrowthOverDirtySlicesReadsZero) {
  on_fresh_thread([] {
    hs_option_set(hs_option_purge_delay, 100000);  // the freed slices stay dirty
    auto* p = static_cast<unsigned char*>(hs_zalloc(100 * kKiB));
    auto* dirty = static_cast<unsigned char*>(hs_malloc(1 * kMiB));  // the slices after p
    void* other = hs_malloc(2 * kMiB);
    ASSERT_TRUE(p != nullptr && dirty != nullptr && other != nullptr);
    std::memset(dirty, 0xEE, 1 * kMiB);
    // A heap keeps its latest empty large page; emptying a second one releases the first's
    // slices, free and still dirty.
    hs_free(dirty);
    hs_free(other);
    p[0] = 7;
    auto* q = static_cast<unsigned char*>(hs_rezalloc(p, 1 * kMiB));
    hs_option_set(hs_option_purge_delay, 10);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q, p) << "meant to grow in place over the dirty slices";
    EXPECT_EQ(q[0], 7);
    for (size_t i = 100 * kKiB; i < 1 * kMiB; i += 509) ASSERT_EQ(q[i], 0) << "offset " << i;
    hs_free(q);
  });
}

// A buffer grown by 1.5x steps, as vectors and string builders grow: the step that reaches
// 32 KiB moves the block onto a slice of its own, and every step after it up to 64 KiB (and on
// into the large classes) stays in place.
TEST(GrowthSpan, ReallocMovesOnceThenGrowsInPlace) {
  on_fresh_thread([] {
    const hs_stats_t before = stats_now();
    size_t size = 24 * kKiB;
    auto* p = static_cast<unsigned char*>(hs_malloc(size));
    ASSERT_NE(p, nullptr);
    fill_pattern(p, size, 21);
    auto* q = static_cast<unsigned char*>(hs_realloc(p, 36 * kKiB));  // moves: 24 KiB class page
    ASSERT_NE(q, nullptr);
    ASSERT_EQ(check_pattern(q, size, 21), SIZE_MAX);
    fill_pattern(q, 36 * kKiB, 21);
    size = 36 * kKiB;
    p = q;
    for (size_t next : {54 * kKiB, 64 * kKiB, 100 * kKiB}) {
      q = static_cast<unsigned char*>(hs_realloc(p, next));
      ASSERT_NE(q, nullptr);
      EXPECT_EQ(q, p) << "growth to " << next << " should have stayed in place";
      ASSERT_EQ(check_pattern(q, size, 21), SIZE_MAX) << "growth to " << next;
      EXPECT_GE(hs_usable_size(q), next);
      fill_pattern(q, next, 21);
      p = q;
      size = next;
    }
    const hs_stats_t grown = stats_now();
    EXPECT_EQ(grown.alloc_count - before.alloc_count, 5u);  // one malloc, four reallocs
    EXPECT_EQ(grown.free_count - before.free_count, 4u);
    EXPECT_EQ(grown.allocated_bytes - before.allocated_bytes, hs_usable_size(p));
    EXPECT_EQ(hs_expand(p, 120 * kKiB), p) << "hs_expand grows a growth span too";
    hs_free(p);
    EXPECT_EQ(stats_now().allocated_bytes, before.allocated_bytes);
  });
}

TEST(GrowthSpan, SmallGrowthAndShrinkingKeepTheSharedPages) {
  on_fresh_thread([] {
    // Below 32 KiB a growing block stays in the shared classes (no slice of its own).
    auto* p = static_cast<unsigned char*>(hs_malloc(10 * kKiB));
    ASSERT_NE(p, nullptr);
    auto* q = static_cast<unsigned char*>(hs_realloc(p, 20 * kKiB));
    ASSERT_NE(q, nullptr);
    void* neighbour = hs_malloc(20 * kKiB);  // same class: the next block of q's page
    ASSERT_NE(neighbour, nullptr);
    EXPECT_LT(std::abs(static_cast<unsigned char*>(neighbour) - q), static_cast<long>(64 * kKiB))
        << "a 20 KiB block should share its page with its class";
    hs_free(neighbour);
    // A growth-span block shrunk below half its size moves back to a shared class.
    auto* r = static_cast<unsigned char*>(hs_realloc(q, 40 * kKiB));
    ASSERT_NE(r, nullptr);
    fill_pattern(r, 40 * kKiB, 22);
    auto* s = static_cast<unsigned char*>(hs_realloc(r, 30 * kKiB));
    EXPECT_EQ(s, r) << "shrinking to 3/4 stays in place";
    auto* t = static_cast<unsigned char*>(hs_realloc(s, 4 * kKiB));
    ASSERT_NE(t, nullptr);
    EXPECT_NE(t, s);
    EXPECT_EQ(check_pattern(t, 4 * kKiB, 22), SIZE_MAX);
    EXPECT_LT(hs_usable_size(t), 8 * kKiB);
    hs_free(t);
  });
}

TEST(GrowthSpan, ZeroingGrowthReadsZeroPastTheOldSize) {
  on_fresh_thread([] {
    // Dirty the slice a growth span will reuse, then grow zeroed through it.
    for (int round = 0; round < 3; ++round) {
      auto* junk = static_cast<unsigned char*>(hs_malloc(20 * kKiB));
      auto* big = static_cast<unsigned char*>(hs_realloc(junk, 60 * kKiB));
      ASSERT_NE(big, nullptr);
      memset(big, 0xEE, 60 * kKiB);
      hs_free(big);
    }
    auto* p = static_cast<unsigned char*>(hs_rezalloc(nullptr, 20 * kKiB));
    ASSERT_NE(p, nullptr);
    fill_pattern(p, 20 * kKiB, 23);
    for (size_t next : {40 * kKiB, 60 * kKiB}) {
      size_t old_usable = hs_usable_size(p);
      auto* q = static_cast<unsigned char*>(hs_rezalloc(p, next));
      ASSERT_NE(q, nullptr);
      EXPECT_EQ(check_pattern(q, 20 * kKiB, 23), SIZE_MAX);
      size_t usable = hs_usable_size(q);
      for (size_t i = old_usable; i < usable; ++i) ASSERT_EQ(q[i], 0) << "byte " << i;
      p = q;
    }
    hs_free(p);
  });
}

TEST(GrowthSpan, AnotherThreadFreesTheBlock) {
  on_fresh_thread([] {
    auto* p = static_cast<unsigned char*>(hs_malloc(20 * kKiB));
    auto* q = static_cast<unsigned char*>(hs_realloc(p, 50 * kKiB));
    ASSERT_NE(q, nullptr);
    fill_pattern(q, 50 * kKiB, 24);
    std::thread([q] {
      EXPECT_EQ(check_pattern(q, 20 * kKiB, 24), SIZE_MAX);
      hs_free(q);
    }).join();
    // The owner collects the remote free and can reuse the memory.
    hs_collect(0);
    for (int i = 0; i < 100; ++i) {
      auto* r = static_cast<unsigned char*>(hs_realloc(hs_malloc(20 * kKiB), 50 * kKiB));
      ASSERT_NE(r, nullptr);
      fill_pattern(r, 50 * kKiB, 25);
      hs_free(r);
    }
  });
}

TEST(HugeRealloc, GrowthRemapsAndKeepsEveryByte) {
  const hs_stats_t before = stats_now();
  size_t size = 20 * kMiB;
  auto* p = static_cast<unsigned char*>(hs_malloc(size));
  ASSERT_NE(p, nullptr);
  fill_pattern(p, size, 71);
  // Grow 1.5x at a time to over 200 MiB; every step must keep the old bytes and give a block
  // that can be written to its end.
  int steps = 0;
  while (size < 200 * kMiB) {
    const size_t old_size = size;
    size = size + size / 2;
    auto* q = static_cast<unsigned char*>(hs_realloc(p, size));
    ASSERT_NE(q, nullptr) << "step " << steps;
    ASSERT_EQ(check_pattern(q, old_size, 71), SIZE_MAX) << "step " << steps;
    EXPECT_GE(hs_usable_size(q), size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 64, 0u);
    q[size - 1] = 0x5A;  // the new end is mapped and writable
    fill_pattern(q, size, 71);
    p = q;
    ++steps;
  }
  const hs_stats_t grown = stats_now();
  // Positive control for "did not copy": every step was served by a remap. Windows cannot move
  // pages to another range (no mremap; engine/docs/platforms.md): there every step copies.
#if defined(_WIN32)
  EXPECT_EQ(grown.huge_remaps - before.huge_remaps, 0u);
#else
  EXPECT_EQ(grown.huge_remaps - before.huge_remaps, static_cast<uint64_t>(steps));
#endif
  // Accounted as a moving realloc: one free and one allocation per step.
  EXPECT_EQ(grown.alloc_count - before.alloc_count, static_cast<uint64_t>(steps) + 1);
  EXPECT_EQ(grown.free_count - before.free_count, static_cast<uint64_t>(steps));
  EXPECT_EQ(grown.allocated_bytes - before.allocated_bytes, hs_usable_size(p));
  EXPECT_EQ(grown.huge_count - before.huge_count, 1u);
  hs_free(p);
  const hs_stats_t after = stats_now();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.huge_count, before.huge_count);
}

TEST(HugeRealloc, ShrinkReturnsTheTailAndKeepsThePrefix) {
  auto* p = static_cast<unsigned char*>(hs_malloc(100 * kMiB));
  ASSERT_NE(p, nullptr);
  fill_pattern(p, 100 * kMiB, 5);
  const hs_stats_t before = stats_now();
  auto* q = static_cast<unsigned char*>(hs_realloc(p, 30 * kMiB));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(check_pattern(q, 30 * kMiB, 5), SIZE_MAX);
  EXPECT_LT(hs_usable_size(q), 31 * kMiB);
  const hs_stats_t after = stats_now();
  EXPECT_EQ(after.huge_remaps - before.huge_remaps, 1u);
  EXPECT_GE(before.reserved_bytes - after.reserved_bytes, 69 * kMiB) << "the tail was unmapped";
  hs_free(q);
}

TEST(HugeRealloc, PointersIntoTheMovedBlockResolve) {
  // After a move the old range must no longer count as ours, and every part of the new
  // block must: usable size from an interior pointer is measured to the new end.
  auto* p = static_cast<unsigned char*>(hs_malloc(40 * kMiB));
  ASSERT_NE(p, nullptr);
  // A neighbour right after p makes growing in place impossible more often than not.
  void* neighbour = hs_malloc(40 * kMiB);
  ASSERT_NE(neighbour, nullptr);
  auto* q = static_cast<unsigned char*>(hs_realloc(p, 90 * kMiB));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(hs_usable_size(q + 70 * kMiB), hs_usable_size(q) - 70 * kMiB);
  EXPECT_NE(hs_is_in_heap_region(q + 89 * kMiB), 0);
  hs_free(q);
  hs_free(neighbour);
}

TEST(HugeRealloc, ZeroingGrowthAndShrinkFollowTheRezallocRules) {
  auto* p = static_cast<unsigned char*>(hs_zalloc(20 * kMiB));
  ASSERT_NE(p, nullptr);
  std::memset(p, 0xEE, 20 * kMiB);
  auto* q = static_cast<unsigned char*>(hs_rezalloc(p, 50 * kMiB));
  ASSERT_NE(q, nullptr);
  for (size_t i = 20 * kMiB; i < 50 * kMiB; i += 4093) ASSERT_EQ(q[i], 0) << "offset " << i;
  EXPECT_EQ(q[20 * kMiB - 1], 0xEE);
  // Shrink well below half: the part kept past the request reads zero on the next growth.
  q = static_cast<unsigned char*>(hs_rezalloc(q, 17 * kMiB + 3));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q[17 * kMiB + 2], 0xEE);
  q = static_cast<unsigned char*>(hs_rezalloc(q, 60 * kMiB));
  ASSERT_NE(q, nullptr);
  for (size_t i = 17 * kMiB + 3; i < 60 * kMiB; i += 4093) ASSERT_EQ(q[i], 0) << "offset " << i;
  hs_free(q);
}

TEST(HugeRealloc, FirstClassHeapBlocksStillMoveCorrectly) {
  // Blocks of a first-class heap are listed in it, so they take the copying path; destroying
  // the heap must still find the block wherever realloc put it.
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  auto* p = static_cast<unsigned char*>(hs_heap_malloc(heap, 20 * kMiB));
  ASSERT_NE(p, nullptr);
  fill_pattern(p, 20 * kMiB, 9);
  auto* q = static_cast<unsigned char*>(hs_heap_realloc(heap, p, 45 * kMiB));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(check_pattern(q, 20 * kMiB, 9), SIZE_MAX);
  const hs_stats_t before = stats_now();
  hs_heap_destroy(heap);
  EXPECT_EQ(before.huge_count - stats_now().huge_count, 1u);
}

TEST(HugeRealloc, AbsurdGrowthFailsAndKeepsTheBlock) {
  auto* p = static_cast<unsigned char*>(hs_malloc(20 * kMiB));
  ASSERT_NE(p, nullptr);
  fill_pattern(p, 20 * kMiB, 3);
  errno = 0;
  EXPECT_EQ(hs_realloc(p, size_t{1} << 46), nullptr);  // 64 TiB on a small machine
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(check_pattern(p, 20 * kMiB, 3), SIZE_MAX);
  EXPECT_EQ(hs_realloc(p, SIZE_MAX), nullptr);
  EXPECT_EQ(check_pattern(p, 20 * kMiB, 3), SIZE_MAX);
  hs_free(p);
}

}  // namespace
