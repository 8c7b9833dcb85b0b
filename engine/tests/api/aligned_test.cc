// Aligned allocation: hs_malloc_aligned, hs_zalloc_aligned, hs_calloc_aligned,
// hs_realloc_aligned, hs_posix_memalign, hs_aligned_alloc, hs_memalign, hs_valloc, hs_pvalloc.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <cerrno>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::check_pattern;
using hs_test::fill_pattern;
using hs_test::is_aligned;
using hs_test::kKiB;
using hs_test::kMiB;
using hs_test::opaque;

constexpr size_t kSizes[] = {0,    1,    8,    15,   16,    17,           100,
                             1000, 4095, 4096, 4097, 70000, 1 * kMiB + 1, 5 * kMiB};

size_t page_size() { return hs_test::page_size(); }

TEST(Aligned, EveryPowerOfTwoUpTo1MiB) {
  for (size_t align = 1; align <= 1 * kMiB; align *= 2) {
    for (size_t n : kSizes) {
      SCOPED_TRACE(testing::Message() << "size " << n << " align " << align);
      void* p = hs_malloc_aligned(n, align);
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(is_aligned(p, align)) << p;
      const size_t usable = hs_usable_size(p);
      EXPECT_GE(usable, n);
      fill_pattern(p, usable, align + n);
      EXPECT_EQ(check_pattern(p, usable, align + n), SIZE_MAX);
      hs_free(p);
    }
  }
}

// Alignments above the huge block's usual offset put a block at the alignment inside its own
// mapping; a zero-byte request there must still own a byte, or free cannot find it (it was
// ignored as foreign and its mapping leaked).
TEST(Aligned, ZeroBytesAtLargeAlignmentsAreRealBlocks) {
  for (size_t align = 128 * kKiB; align <= 1 * kMiB; align *= 2) {
    SCOPED_TRACE(testing::Message() << "align " << align);
    const uint64_t huge_before = hs_test::stats_now().huge_count;
    void* p = hs_malloc_aligned(0, align);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(is_aligned(p, align));
    EXPECT_GE(hs_usable_size(p), 1u);
    EXPECT_EQ(hs_test::stats_now().huge_count, huge_before + 1);
    hs_free(p);
    EXPECT_EQ(hs_test::stats_now().huge_count, huge_before) << "the free was ignored";
  }
}

TEST(Aligned, ManyLiveBlocksKeepTheirBytes) {
  // Live at the same time, so over-aligned blocks cannot overlap each other.
  std::vector<std::pair<void*, size_t>> live;
  for (size_t align = 16; align <= 1 * kMiB; align *= 4) {
    for (size_t n : {size_t{24}, size_t{3000}, 50 * kKiB}) {
      for (int i = 0; i < 4; ++i) {
        void* p = hs_malloc_aligned(n, align);
        ASSERT_NE(p, nullptr);
        ASSERT_TRUE(is_aligned(p, align));
        fill_pattern(p, n, live.size());
        live.emplace_back(p, n);
      }
    }
  }
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(check_pattern(live[i].first, live[i].second, i), SIZE_MAX) << "block " << i;
  }
  for (auto& [p, n] : live) hs_free(p);
}

TEST(Aligned, LargeAlignmentBeyond1MiBStillCorrect) {
  for (size_t align : {2 * kMiB, 8 * kMiB}) {
    void* p = hs_malloc_aligned(100, align);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(is_aligned(p, align));
    fill_pattern(p, 100, 1);
    EXPECT_EQ(check_pattern(p, 100, 1), SIZE_MAX);
    hs_free(p);
  }
}

TEST(Aligned, InvalidAlignmentIsEinval) {
  for (size_t align : {size_t{0}, size_t{3}, size_t{5}, size_t{24}, size_t{48}, size_t{1000},
                       (size_t{1} << 20) + 16, SIZE_MAX}) {
    SCOPED_TRACE(testing::Message() << "align " << align);
    errno = 0;
    EXPECT_EQ(hs_malloc_aligned(16, opaque(align)), nullptr);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(hs_zalloc_aligned(16, opaque(align)), nullptr);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(hs_calloc_aligned(2, 8, opaque(align)), nullptr);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(hs_aligned_alloc(opaque(align), 16), nullptr);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(hs_memalign(opaque(align), 16), nullptr);
    EXPECT_EQ(errno, EINVAL);
  }
}

TEST(Aligned, ReallocAlignedInvalidAlignmentKeepsBlock) {
  void* p = hs_malloc_aligned(64, 64);
  ASSERT_NE(p, nullptr);
  fill_pattern(p, 64, 9);
  errno = 0;
  EXPECT_EQ(hs_realloc_aligned(p, 128, opaque(size_t{3})), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(check_pattern(p, 64, 9), SIZE_MAX);
  hs_free(p);
}

TEST(PosixMemalign, InvalidAlignmentReturnsEinvalWithoutTouchingOut) {
  void* const sentinel =
      reinterpret_cast<void*>(uintptr_t{0x5a5a5a5a});  // NOLINT(performance-no-int-to-ptr)
  for (size_t align : {size_t{0}, size_t{1}, size_t{2}, size_t{4}, size_t{3}, size_t{24},
                       size_t{12}, size_t{4097}}) {
    SCOPED_TRACE(testing::Message() << "align " << align);
    void* out = sentinel;
    EXPECT_EQ(hs_posix_memalign(&out, opaque(align), 16), EINVAL);
    EXPECT_EQ(out, sentinel);
  }
}

TEST(PosixMemalign, ValidAlignmentsAndEnomem) {
  for (size_t align = sizeof(void*); align <= 1 * kMiB; align *= 2) {
    void* out = nullptr;
    ASSERT_EQ(hs_posix_memalign(&out, align, 100), 0) << "align " << align;
    ASSERT_NE(out, nullptr);
    EXPECT_TRUE(is_aligned(out, align));
    EXPECT_GE(hs_usable_size(out), 100u);
    hs_free(out);
  }
  void* const sentinel =
      reinterpret_cast<void*>(uintptr_t{0x5a5a5a5a});  // NOLINT(performance-no-int-to-ptr)
  void* out = sentinel;
  EXPECT_EQ(hs_posix_memalign(&out, 64, opaque(SIZE_MAX)), ENOMEM);
  EXPECT_EQ(out, sentinel);
  out = nullptr;
  EXPECT_EQ(hs_posix_memalign(&out, 64, 0), 0);
  EXPECT_NE(out, nullptr);  // size 0 gives a unique block, like malloc(0)
  hs_free(out);
}

TEST(Aligned, OverflowAndHugeSizesAreEnomem) {
  errno = 0;
  EXPECT_EQ(hs_malloc_aligned(opaque(SIZE_MAX), 64), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_malloc_aligned(opaque(SIZE_MAX - 100), 4096), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_calloc_aligned(opaque(SIZE_MAX / 2), 3, 64), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_aligned_alloc(64, opaque(SIZE_MAX)), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_valloc(opaque(SIZE_MAX)), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_pvalloc(opaque(SIZE_MAX)), nullptr);  // rounding up to a page overflows
  EXPECT_EQ(errno, ENOMEM);
}

TEST(Aligned, ZallocAndCallocAlignedAreZeroAndAligned) {
  for (size_t align : {size_t{16}, size_t{256}, size_t{4096}, 64 * kKiB, 1 * kMiB}) {
    for (size_t n : {size_t{10}, size_t{1000}, 100 * kKiB}) {
      SCOPED_TRACE(testing::Message() << "size " << n << " align " << align);
      void* dirty = hs_malloc_aligned(n, align);  // dirty a block the next call may reuse
      ASSERT_NE(dirty, nullptr);
      std::memset(dirty, 0xCC, hs_usable_size(dirty));
      hs_free(dirty);
      void* z = hs_zalloc_aligned(n, align);
      ASSERT_NE(z, nullptr);
      EXPECT_TRUE(is_aligned(z, align));
      EXPECT_EQ(hs_test::first_nonzero(z, 0, hs_usable_size(z)), SIZE_MAX);
      hs_free(z);
      void* c = hs_calloc_aligned(n / 10, 10, align);
      ASSERT_NE(c, nullptr);
      EXPECT_TRUE(is_aligned(c, align));
      EXPECT_GE(hs_usable_size(c), n / 10 * 10);
      EXPECT_EQ(hs_test::first_nonzero(c, 0, hs_usable_size(c)), SIZE_MAX);
      hs_free(c);
    }
  }
}

TEST(Aligned, ReallocAlignedKeepsAlignmentAndContents) {
  const size_t align = 4096;
  void* p = hs_realloc_aligned(nullptr, 100, align);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(is_aligned(p, align));
  fill_pattern(p, 100, 100);
  size_t size = 100;
  for (size_t next : {size_t{5000}, size_t{300}, 200 * kKiB, 3 * kMiB, size_t{64}}) {
    SCOPED_TRACE(testing::Message() << size << " -> " << next);
    void* q = hs_realloc_aligned(p, next, align);
    ASSERT_NE(q, nullptr);
    EXPECT_TRUE(is_aligned(q, align)) << q;
    EXPECT_GE(hs_usable_size(q), next);
    const size_t keep = size < next ? size : next;
    EXPECT_EQ(check_pattern(q, keep, size), SIZE_MAX);
    fill_pattern(q, next, next);
    p = q;
    size = next;
  }
  hs_free(p);
}

TEST(Aligned, AlignedAllocMemalignVallocPvalloc) {
  void* a = hs_aligned_alloc(256, 1000);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(is_aligned(a, 256));
  EXPECT_GE(hs_usable_size(a), 1000u);
  void* m = hs_memalign(64 * kKiB, 10);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(is_aligned(m, 64 * kKiB));
  void* v = hs_valloc(10);
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(is_aligned(v, page_size()));
  void* pv = hs_pvalloc(page_size() + 1);
  ASSERT_NE(pv, nullptr);
  EXPECT_TRUE(is_aligned(pv, page_size()));
  EXPECT_GE(hs_usable_size(pv), 2 * page_size()) << "pvalloc rounds the size up to pages";
  void* pv0 = hs_pvalloc(0);
  ASSERT_NE(pv0, nullptr);
  EXPECT_TRUE(is_aligned(pv0, page_size()));
  for (void* p : {a, m, v, pv, pv0}) {
    std::memset(p, 0x11, hs_usable_size(p));
    hs_free(p);
  }
}

}  // namespace
