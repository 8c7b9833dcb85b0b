// Size classes: the rounding of sizes just past a power of two, and how much of a segment a
// medium class holds for its first block.
#include "core/size_class.h"

#include <gtest/gtest.h>

#include <vector>

#include "heapscope/heapscope.h"
#include "page_of_block.h"

namespace {

using heapscope::bin_block_size;
using heapscope::bin_of;
using heapscope::kMediumBlockMax;
using heapscope::kSliceSize;
using heapscope::kSmallBlockMax;

// A class with a few blocks live keeps its whole page's span: where the page starts on
// slices an earlier page or large block left resident, all of it stays resident. At 256 KiB
// a page (not 512), a thread-pool round of mixed sizes peaked ~10% lower (docs/allocator.md,
// "Medium pages").
TEST(SizeClass, AMediumClassWithOneBlockLiveSpansAQuarterMiB) {
  std::vector<void*> blocks;
  for (size_t bin = bin_of(kSmallBlockMax) + 1; bin <= bin_of(kMediumBlockMax); ++bin) {
    void* p = hs_malloc(bin_block_size(bin));
    ASSERT_NE(p, nullptr);
    blocks.push_back(p);
    const heapscope::Page* page = hs_internal_test::page_of_block(p);
    EXPECT_EQ(page->block_size, bin_block_size(bin));
    EXPECT_LE(page->slice_count * kSliceSize, size_t{256} << 10) << "class " << bin_block_size(bin);
    // Yet at least four blocks a page: a page set up per block or two would cost time.
    EXPECT_GE(page->slice_count * kSliceSize / page->block_size, 4u);
  }
  for (void* p : blocks) hs_free(p);
}

// Buffers of a power of two plus a small header (SQLite's page cache asks for 1,032- and
// 4,368-byte blocks) fill one-slice pages by the thousand: rounded to the next of four
// classes per power of two they wasted 24% and 17%, resident (an in-memory SQLite database
// of 90,000 rows peaked at 39.9 MB against glibc's 33.7). From 1 KiB to 8 KiB a fifth class
// an eighth past the power of two takes them.
TEST(SizeClass, SizesJustPastAPowerOfTwoUpTo8KiBWasteAtMostAnEighth) {
  for (size_t power = 1024; power < kSmallBlockMax; power *= 2) {
    for (size_t n = power + 1; n <= power + power / 8; ++n) {
      void* p = hs_malloc(n);
      ASSERT_NE(p, nullptr);
      EXPECT_LE(hs_usable_size(p), power + power / 8) << "size " << n;
      hs_free(p);
    }
  }
  // And each size in the range gets the smallest class that holds it.
  for (size_t n = 1025; n <= kSmallBlockMax; ++n) {
    const size_t bin = bin_of(n);
    ASSERT_GE(bin_block_size(bin), n);
    ASSERT_LT(bin_block_size(bin - 1), n) << "size " << n;
  }
}

}  // namespace
