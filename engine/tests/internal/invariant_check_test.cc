// The debug build's invariant checks (core/assert.h) fire on a corrupted page: a page whose
// `used` count disagrees with its free lists stops the process at the next collection, with
// the failed check named. Needs the expensive checks (HS_DEBUG=2, the Debug build); other
// builds compile the checks out and skip.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/segment.h"
#include "heapscope/heapscope.h"

namespace {

#ifndef HS_TEST_ENGINE_DEBUG
#define HS_TEST_ENGINE_DEBUG 0
#endif

// The page descriptor of a small block: its slice's entry in the segment header (small
// blocks sit on one-slice pages, so the slice is the page's first).
heapscope::Page* page_of_small_block(void* p) {
  auto address = reinterpret_cast<uintptr_t>(p);
  auto* segment = reinterpret_cast<heapscope::Segment*>(address & ~heapscope::kSegmentMask);
  size_t slice = (address & heapscope::kSegmentMask) >> heapscope::kSliceShift;
  heapscope::Page* page = &segment->pages[slice];
  return page - page->slice_back;
}

void corrupt_used_count_then_collect() {
  void* p = hs_malloc(48);
  void* q = hs_malloc(48);
  heapscope::Page* page = page_of_small_block(p);
  page->used += 3;  // three blocks counted live that are on no list and were never handed out
  hs_free(q);
  hs_collect(0);  // collects the page: its counts are checked against its lists
}

TEST(InvariantCheck, CorruptedPageCountStopsTheProcess) {
  if (HS_TEST_ENGINE_DEBUG < 2) GTEST_SKIP() << "the expensive checks are in Debug builds only";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(corrupt_used_count_then_collect(), "internal check failed: page_counts_agree");
}

// The control: the same steps without the corruption pass every check.
TEST(InvariantCheck, IntactPagePassesTheChecks) {
  void* p = hs_malloc(48);
  void* q = hs_malloc(48);
  EXPECT_EQ(page_of_small_block(p), page_of_small_block(q));
  hs_free(q);
  hs_collect(0);
  hs_free(p);
  hs_collect(1);
}

}  // namespace
