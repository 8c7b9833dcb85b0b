// The debug build's invariant checks (core/assert.h) fire on a corrupted page: a page whose
// `used` count disagrees with its free lists stops the process at the next collection, with
// the failed check named. Needs the expensive checks (HS_DEBUG=2, the Debug build); other
// builds compile the checks out and skip.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/segment.h"
#include "heapscope/heapscope.h"
#include "page_of_block.h"

namespace {

#ifndef HS_TEST_ENGINE_DEBUG
#define HS_TEST_ENGINE_DEBUG 0
#endif

void corrupt_used_count_then_collect() {
  void* p = hs_malloc(48);
  void* q = hs_malloc(48);
  heapscope::Page* page = hs_internal_test::page_of_block(p);
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
  EXPECT_EQ(hs_internal_test::page_of_block(p), hs_internal_test::page_of_block(q));
  hs_free(q);
  hs_collect(0);
  hs_free(p);
  hs_collect(1);
}

}  // namespace
