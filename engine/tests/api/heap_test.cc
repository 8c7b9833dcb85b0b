// First-class heaps: hs_heap_new/delete/destroy/get_default, hs_heap_malloc and friends,
// hs_heap_contains, hs_heap_stats_get, and hs_is_in_heap_region for foreign pointers.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#if !defined(_WIN32)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <thread>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::check_pattern;
using hs_test::fill_pattern;
using hs_test::kKiB;
using hs_test::kMiB;
using hs_test::opaque;
using hs_test::stats_now;

// Small, medium, large and huge sizes.
constexpr size_t kMixedSizes[] = {8, 100, 1000, 5000, 70 * kKiB, 700 * kKiB, 3 * kMiB, 40};

int g_static_object = 42;

TEST(Heap, AllocationsBelongToTheirHeap) {
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  hs_heap_t* def = hs_heap_get_default();
  ASSERT_NE(def, nullptr);
  EXPECT_NE(heap, def);
  EXPECT_EQ(hs_heap_get_default(), def);

  std::vector<void*> mine;
  for (size_t n : kMixedSizes) {
    void* p = hs_heap_malloc(heap, n);
    ASSERT_NE(p, nullptr);
    EXPECT_GE(hs_usable_size(p), n);
    EXPECT_TRUE(hs_heap_contains(heap, p)) << "size " << n;
    EXPECT_FALSE(hs_heap_contains(def, p)) << "size " << n;
    EXPECT_TRUE(hs_is_in_heap_region(p));
    mine.push_back(p);
  }
  void* other = hs_malloc(100);
  ASSERT_NE(other, nullptr);
  EXPECT_FALSE(hs_heap_contains(heap, other));
  EXPECT_TRUE(hs_heap_contains(def, other));
  int on_stack = 0;
  EXPECT_FALSE(hs_heap_contains(heap, &on_stack));
  EXPECT_FALSE(hs_heap_contains(heap, nullptr));
  hs_free(other);
  for (void* p : mine) hs_free(p);
  hs_heap_delete(heap);
}

TEST(Heap, ZallocCallocReallocAlignedInAHeap) {
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  void* dirty = hs_heap_malloc(heap, 3000);
  ASSERT_NE(dirty, nullptr);
  std::memset(dirty, 0x99, hs_usable_size(dirty));
  hs_free(dirty);
  void* z = hs_heap_zalloc(heap, 3000);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(hs_test::first_nonzero(z, 0, hs_usable_size(z)), SIZE_MAX);
  void* c = hs_heap_calloc(heap, 300, 10);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(hs_test::first_nonzero(c, 0, hs_usable_size(c)), SIZE_MAX);
  EXPECT_TRUE(hs_heap_contains(heap, z));
  EXPECT_TRUE(hs_heap_contains(heap, c));

  fill_pattern(z, 3000, 1);
  void* r = hs_heap_realloc(heap, z, 200 * kKiB);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(check_pattern(r, 3000, 1), SIZE_MAX);
  EXPECT_TRUE(hs_heap_contains(heap, r));

  for (size_t align : {size_t{64}, size_t{4096}, 1 * kMiB}) {
    void* a = hs_heap_malloc_aligned(heap, 100, align);
    ASSERT_NE(a, nullptr);
    EXPECT_TRUE(hs_test::is_aligned(a, align));
    EXPECT_TRUE(hs_heap_contains(heap, a));
    hs_free(a);
  }
  errno = 0;
  EXPECT_EQ(hs_heap_malloc_aligned(heap, 100, opaque(size_t{48})), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(hs_heap_malloc(heap, opaque(SIZE_MAX)), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_heap_calloc(heap, opaque(SIZE_MAX / 2), 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_heap_realloc(heap, c, opaque(SIZE_MAX)), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(hs_test::first_nonzero(c, 0, 3000), SIZE_MAX);
  hs_free(r);
  hs_free(c);
  hs_heap_delete(heap);
}

TEST(Heap, DeleteMovesLiveBlocksToTheDefaultHeap) {
  const hs_stats_t start = stats_now();
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  EXPECT_EQ(stats_now().heaps, start.heaps + 1);
  std::vector<std::pair<void*, size_t>> blocks;
  for (int round = 0; round < 50; ++round) {
    for (size_t n : kMixedSizes) {
      if (n > 100 * kKiB && round > 2) continue;
      void* p = hs_heap_malloc(heap, n);
      ASSERT_NE(p, nullptr);
      fill_pattern(p, n, blocks.size());
      blocks.emplace_back(p, n);
    }
  }
  const hs_stats_t before_delete = stats_now();
  hs_heap_delete(heap);
  const hs_stats_t after_delete = stats_now();
  EXPECT_EQ(after_delete.heaps, start.heaps);
  EXPECT_EQ(after_delete.allocated_bytes, before_delete.allocated_bytes)
      << "delete keeps every live block";
  hs_heap_t* def = hs_heap_get_default();
  for (size_t i = 0; i < blocks.size(); ++i) {
    auto [p, n] = blocks[i];
    ASSERT_TRUE(hs_heap_contains(def, p)) << "block " << i << " of size " << n;
    ASSERT_EQ(check_pattern(p, n, i), SIZE_MAX) << "block " << i;
  }
  // The migrated blocks behave like any default-heap block: realloc, then free.
  for (size_t i = 0; i < blocks.size(); ++i) {
    auto [p, n] = blocks[i];
    if (i % 2 == 0) {
      void* q = hs_realloc(p, n + 1000);
      ASSERT_NE(q, nullptr);
      EXPECT_EQ(check_pattern(q, n, i), SIZE_MAX);
      hs_free(q);
    } else {
      hs_free(p);
    }
  }
  EXPECT_EQ(stats_now().allocated_bytes, start.allocated_bytes);
}

TEST(Heap, DestroyFreesEverything) {
  const hs_stats_t start = stats_now();
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  size_t requested = 0;
  size_t usable = 0;
  for (int i = 0; i < 2000; ++i) {
    const size_t n = static_cast<size_t>(i % 700) + 1;
    void* p = hs_heap_malloc(heap, n);
    ASSERT_NE(p, nullptr);
    std::memset(p, 0x5E, n);
    requested += n;
    usable += hs_usable_size(p);
  }
  for (size_t n : {200 * kKiB, 2 * kMiB, 24 * kMiB}) {  // 24 MiB: a huge block
    void* p = hs_heap_malloc(heap, n);
    ASSERT_NE(p, nullptr);
    requested += n;
    usable += hs_usable_size(p);
  }
  const hs_stats_t hs = hs_test::heap_stats_now(heap);
  EXPECT_EQ(hs.alloc_count, 2003u);
  EXPECT_EQ(hs.requested_bytes, requested);
  EXPECT_EQ(hs.allocated_bytes, usable);
  EXPECT_EQ(hs.free_count, 0u);
  EXPECT_EQ(hs.threads, 0u) << "process-level fields are zero in heap stats";
  const hs_stats_t before = stats_now();
  EXPECT_EQ(before.allocated_bytes, start.allocated_bytes + usable);
  EXPECT_GE(before.huge_count, start.huge_count + 1);

  hs_heap_destroy(heap);
  const hs_stats_t after = stats_now();
  EXPECT_EQ(after.allocated_bytes, start.allocated_bytes);
  EXPECT_EQ(after.heaps, start.heaps);
  EXPECT_EQ(after.huge_count, start.huge_count);
  EXPECT_LE(after.committed_bytes, before.committed_bytes);

  // A new heap works afterwards.
  hs_heap_t* again = hs_heap_new();
  ASSERT_NE(again, nullptr);
  void* p = hs_heap_malloc(again, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(hs_heap_contains(again, p));
  hs_heap_destroy(again);
  EXPECT_EQ(stats_now().allocated_bytes, start.allocated_bytes);
}

TEST(Heap, OtherThreadsMayFreeItsBlocks) {
  const hs_stats_t start = stats_now();
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  std::vector<void*> blocks;
  for (int i = 0; i < 3000; ++i) {
    void* p = hs_heap_malloc(heap, static_cast<size_t>(i % 2000) + 1);
    ASSERT_NE(p, nullptr);
    blocks.push_back(p);
  }
  std::thread([&] {
    for (void* p : blocks) hs_free(p);
  }).join();
  // The owner keeps allocating from the heap (collecting the remote frees) and then deletes it.
  for (int i = 0; i < 3000; ++i) {
    void* p = hs_heap_malloc(heap, static_cast<size_t>(i % 2000) + 1);
    ASSERT_NE(p, nullptr);
    hs_free(p);
  }
  hs_heap_delete(heap);
  const hs_stats_t end = stats_now();
  EXPECT_EQ(end.allocated_bytes, start.allocated_bytes);
  EXPECT_EQ(end.free_count - start.free_count, 6000u);
  EXPECT_EQ(end.alloc_count - start.alloc_count, 6000u);
}

TEST(Heap, EachThreadHasItsOwnDefaultHeap) {
  hs_heap_t* mine = hs_heap_get_default();
  hs_heap_t* theirs = nullptr;
  void* their_block = nullptr;
  int their_contains = -1;
  std::thread([&] {
    theirs = hs_heap_get_default();
    their_block = hs_malloc(64);
    their_contains = hs_heap_contains(theirs, their_block);
  }).join();
  EXPECT_NE(mine, nullptr);
  EXPECT_NE(theirs, nullptr);
  EXPECT_NE(mine, theirs);
  EXPECT_EQ(their_contains, 1);
  EXPECT_FALSE(hs_heap_contains(mine, their_block));
  hs_free(their_block);  // block of an exited thread: freeing it must work
}

TEST(Region, OwnPointersAreInside) {
  std::vector<void*> blocks;
  for (size_t n : kMixedSizes) {
    void* p = hs_malloc(n);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(hs_is_in_heap_region(p)) << "size " << n;
    EXPECT_TRUE(hs_is_in_heap_region(static_cast<char*>(p) + hs_usable_size(p) - 1))
        << "last usable byte of size " << n;
    blocks.push_back(p);
  }
  void* a = hs_malloc_aligned(10, 1 * kMiB);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(hs_is_in_heap_region(a));
  hs_free(a);
  for (void* p : blocks) hs_free(p);
}

#if !defined(_WIN32)  // mmap at a fixed address; VirtualAlloc places at 64 KiB granularity only
// A huge block's mapping ends at a page, but its segment-map entry covers a whole 32 MiB
// range: memory someone else maps right after the block must still read as foreign.
TEST(Region, MemoryMappedRightAfterAHugeBlockIsOutside) {
  const size_t size = 17 * kMiB;
  auto* p = static_cast<char*>(hs_malloc(size));
  ASSERT_NE(p, nullptr);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // The block ends its mapping (usable size runs to the mapping's end).
  char* after = p + hs_usable_size(p);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(after) % page, 0u);
  void* foreign = mmap(after, page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (foreign != after) {
    if (foreign != MAP_FAILED) munmap(foreign, page);
    hs_free(p);
    GTEST_SKIP() << "the page after the block is taken";
  }
  EXPECT_NE(hs_is_in_heap_region(p + size - 1), 0);
  EXPECT_FALSE(hs_is_in_heap_region(foreign));
  EXPECT_EQ(hs_usable_size(foreign), 0u);
  munmap(foreign, page);
  hs_free(p);
}
#endif

TEST(Region, ForeignPointersAreOutside) {
  int on_stack = 0;
  void* from_glibc = std::malloc(100);  // this test links the non-overriding library
  void* big_from_glibc = std::malloc(4 * kMiB);
  ASSERT_NE(from_glibc, nullptr);
  ASSERT_NE(big_from_glibc, nullptr);
  EXPECT_FALSE(hs_is_in_heap_region(&on_stack));
  EXPECT_FALSE(hs_is_in_heap_region(from_glibc));
  EXPECT_FALSE(hs_is_in_heap_region(big_from_glibc));
  EXPECT_FALSE(hs_is_in_heap_region(&g_static_object));
  EXPECT_FALSE(hs_is_in_heap_region(reinterpret_cast<const void*>(&hs_malloc)));
  EXPECT_FALSE(hs_is_in_heap_region(nullptr));
  for (uintptr_t v : {uintptr_t{1}, uintptr_t{4096}, uintptr_t{0x7fffffffffff},
                      uintptr_t{0x800000000000}, uintptr_t{0xffff800000000000}, UINTPTR_MAX}) {
    // NOLINTNEXTLINE(performance-no-int-to-ptr): arbitrary addresses are the point
    EXPECT_FALSE(hs_is_in_heap_region(reinterpret_cast<const void*>(v))) << std::hex << v;
  }
  std::free(big_from_glibc);
  std::free(from_glibc);
}

}  // namespace
