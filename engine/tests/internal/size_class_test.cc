// Medium pages: how much of a segment a medium class holds for its first block.
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

}  // namespace
