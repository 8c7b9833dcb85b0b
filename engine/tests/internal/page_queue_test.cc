// The page queue's handling of a page that runs out of blocks (core/malloc_generic.cc,
// queue_page_with_block): passed once, it goes to the back of its queue and keeps taking its
// owner's frees on the fast path; found without a block a second time, it parks in the full
// list. Read through the page descriptors, on a fresh thread so the heap starts empty.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "core/page.h"
#include "core/segment.h"
#include "heapscope/heapscope.h"
#include "page_of_block.h"

namespace {

constexpr size_t kQueueTestSize = 1024;  // a one-slice page of 64 blocks
constexpr size_t kBlocksPerPage = heapscope::kSliceSize / kQueueTestSize;

bool in_full_list(const heapscope::Page* page) {
  return (heapscope::page_flags(page) & heapscope::kPageInFull) != 0;
}

TEST(PageQueue, APageRunDryBesideOneWithRoomStaysInItsQueueUntilPassedAgain) {
  std::thread([] {
    std::vector<void*> blocks;
    // Page A fills; alone in its queue when it runs dry, it parks in the full list, and the
    // next block comes from a fresh page B.
    for (size_t i = 0; i <= kBlocksPerPage; ++i) blocks.push_back(hs_malloc(kQueueTestSize));
    heapscope::Page* a = hs_internal_test::page_of_block(blocks.front());
    heapscope::Page* b = hs_internal_test::page_of_block(blocks.back());
    ASSERT_NE(a, b);
    ASSERT_TRUE(in_full_list(a));
    // A free brings A back, behind B.
    hs_free(blocks.front());
    ASSERT_FALSE(in_full_list(a));
    // B runs dry while A, behind it, has a block: B is passed, not parked, and A serves.
    while (hs_internal_test::page_of_block(blocks.back()) == b)
      blocks.push_back(hs_malloc(kQueueTestSize));
    EXPECT_EQ(hs_internal_test::page_of_block(blocks.back()), a);
    EXPECT_FALSE(in_full_list(b)) << "a page passed once stays in its queue";
    // Found without a block again (A is dry too now): both park, and a fresh page serves.
    void* c = hs_malloc(kQueueTestSize);
    EXPECT_NE(hs_internal_test::page_of_block(c), a);
    EXPECT_NE(hs_internal_test::page_of_block(c), b);
    EXPECT_TRUE(in_full_list(a));
    EXPECT_TRUE(in_full_list(b));
    hs_free(c);
    for (size_t i = 1; i < blocks.size(); ++i) hs_free(blocks[i]);
  }).join();
}

}  // namespace
