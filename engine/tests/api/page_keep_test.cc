// An emptied page stays when it is the only page of its size class (a malloc/free loop must
// not map and unmap a page every time) and goes back to its segment when its class has
// others. Free's fast path decides this through the keep bias in Page::used, which the page
// queues maintain; these tests watch the outcome in the statistics' page count.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::on_fresh_thread;
using hs_test::ScopedPurgeDelays;
using hs_test::stats_now;

constexpr size_t kSize = 3000;  // the 3 KiB class: 21 blocks on a one-slice page

TEST(PageKeep, ALonePageIsKeptThroughAMallocFreeLoop) {
  on_fresh_thread([] {
    const uint64_t pages_before = stats_now().pages;
    void* first = hs_malloc(kSize);
    ASSERT_NE(first, nullptr);
    hs_free(first);
    EXPECT_EQ(stats_now().pages, pages_before + 1) << "the emptied lone page is kept";
    for (int i = 0; i < 1000; ++i) {
      void* p = hs_malloc(kSize);
      ASSERT_EQ(p, first) << "the kept page serves the same block again";
      hs_free(p);
    }
    EXPECT_EQ(stats_now().pages, pages_before + 1);
  });
}

TEST(PageKeep, EmptiedPagesOfABusyClassAreRetiredDownToOne) {
  on_fresh_thread([] {
    const hs_stats_t before = stats_now();
    for (int round = 0; round < 3; ++round) {
      std::vector<void*> blocks;
      for (int i = 0; i < 5 * 21; ++i) {  // five pages of the class
        blocks.push_back(hs_malloc(kSize));
        ASSERT_NE(blocks.back(), nullptr);
      }
      EXPECT_GE(stats_now().pages, before.pages + 5);
      // Free from the last page back, then the first pages: every order of emptying.
      if (round == 1) std::reverse(blocks.begin(), blocks.end());
      if (round == 2) {
        for (size_t i = 0; i < blocks.size(); i += 2)
          std::swap(blocks[i], blocks[blocks.size() - 1 - i]);
      }
      for (void* p : blocks) hs_free(p);
      EXPECT_EQ(stats_now().pages, before.pages + 1) << "round " << round << ": one page kept";
      EXPECT_EQ(stats_now().allocated_bytes, before.allocated_bytes) << "round " << round;
    }
    // The kept page still serves and empties like a lone page.
    void* p = hs_malloc(kSize);
    ASSERT_NE(p, nullptr);
    hs_free(p);
    EXPECT_EQ(stats_now().pages, before.pages + 1);
  });
}

TEST(PageKeep, APageThatSharesItsClassGoesWhenItEmpties) {
  on_fresh_thread([] {
    const uint64_t pages_before = stats_now().pages;
    // Page A fills and parks as full; page B serves the next block. A free into A brings it
    // back beside B, so both share the class: whichever empties first goes, the other stays.
    std::vector<void*> a;
    for (int i = 0; i < 21; ++i) a.push_back(hs_malloc(kSize));
    void* b = hs_malloc(kSize);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(stats_now().pages, pages_before + 2);
    hs_free(a.back());
    a.pop_back();
    hs_free(b);
    EXPECT_EQ(stats_now().pages, pages_before + 1) << "B emptied beside A: it goes";
    for (void* p : a) hs_free(p);
    EXPECT_EQ(stats_now().pages, pages_before + 1) << "A, alone again, is kept";
    void* again = hs_malloc(kSize);
    ASSERT_NE(again, nullptr);
    hs_free(again);
    EXPECT_EQ(stats_now().pages, pages_before + 1);
    hs_collect(1);  // a forced collection gives the kept page back too
    EXPECT_EQ(stats_now().pages, pages_before);
  });
}

// hs_collect, like a thread's exit, walks the heap's queues and frees every page left without
// a live block. Each free runs the purge round when one is due, and a round frees a class's
// idle kept page: run inside the walk, it freed the page the walk was about to visit, which
// the walk then freed a second time (a debug build stops at the queue's check; a release
// build counted the page twice and could drop the rest of its queue). Each page must go once.
TEST(PageKeep, ACollectionFreesEachEmptiedPageOnceWhenAPurgeRoundFallsDueInside) {
  ScopedPurgeDelays delays(50, 50);
  on_fresh_thread([] {
    // A full page emptied beside the class's next page B: freed, it sets the purge deadline.
    std::vector<void*> first_page;
    for (int i = 0; i < 21; ++i) first_page.push_back(hs_malloc(kSize));
    void* b = hs_malloc(kSize);
    ASSERT_NE(b, nullptr);
    for (void* p : first_page) hs_free(p);
    // Page K: a first-class heap's lone page of the class, emptied (kept); deleting the heap
    // moves K behind B in this thread's queue, its counts folded: an idle kept page.
    hs_heap_t* heap = hs_heap_new();
    ASSERT_NE(heap, nullptr);
    void* k = hs_heap_malloc(heap, kSize);
    ASSERT_NE(k, nullptr);
    hs_free(k);
    hs_heap_delete(heap);
    // B's block freed by another thread: B empties only when the collection collects it.
    std::thread([b] { hs_free(b); }).join();
    std::this_thread::sleep_for(std::chrono::milliseconds(150));  // the deadline passes
    const uint64_t pages_before = stats_now().pages;
    hs_collect(0);  // B goes, the round falls due, K goes: by the round or the walk, once
    EXPECT_EQ(stats_now().pages, pages_before - 2) << "a page was freed twice, or not at all";
    void* again = hs_malloc(kSize);  // the class still serves
    ASSERT_NE(again, nullptr);
    hs_free(again);
  });
}

}  // namespace
