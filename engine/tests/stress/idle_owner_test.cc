// Pages of an owner that stopped calling the allocator and whose blocks other threads free:
// once none of a page's blocks is live, a thread freeing into the owner gives the page's
// memory back for it (engine/src/core/idle_owner.cc), instead of leaving it resident behind
// a thread that may never collect it. The owner waking up while its pages are being emptied,
// and freeing its own blocks into them, must lose no block and corrupt none (run under ASan
// and TSan as well).
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

#include "../support/id_blocks.h"
#include "../support/test_support.h"

namespace {

using hs_test::block_intact;
using hs_test::block_new;
using hs_test::BlockSlots;
using hs_test::kMiB;
using hs_test::rss_bytes;
using hs_test::scaled;
using hs_test::SplitMix64;
using hs_test::stats_now;
using hs_test::wait_for;

// Longer than an owner must stay out of the allocator before others sweep its pages
// (kOwnerIdleMs in engine/src/core/idle_owner.cc), and than they wait between sweeps.
constexpr auto kLongerThanIdle = std::chrono::milliseconds(25);

class IdleOwner : public hs_test::UncheckedPagesTest {};

constexpr size_t kSizes[] = {48, 112, 256, 640, 1024, 2048};
constexpr size_t kClasses = sizeof kSizes / sizeof kSizes[0];

// The shape of mimalloc-bench's larson: an owner makes blocks of several sizes, replaces an
// eighth of them at random (so its pages hold free blocks of its own as well), and then
// waits without calling the allocator while another thread frees every one of them. The
// pages in its queues other than each class's first (which its allocations pop from) are
// given back: their memory leaves the process though the owner never returns.
TEST_F(IdleOwner, PagesEmptiedWhileTheirOwnerWaitsAreGivenBack) {
  const size_t per_class = (1200 * 1024) / 1024;  // blocks of each size: ~1.2 MB of 1 KiB
  std::vector<void*> blocks;
  std::vector<size_t> sizes;
  for (size_t c = 0; c < kClasses; ++c) {
    const size_t count = per_class * 1024 / kSizes[c];
    for (size_t i = 0; i < count; ++i) sizes.push_back(kSizes[c]);
  }
  blocks.resize(sizes.size());
  std::atomic<int> phase{0};
  hs_collect(1);
  const hs_stats_t before = stats_now();
  const size_t rss_before = rss_bytes();
  uint64_t owner_pages = 0;
  size_t rss_made = 0;
  size_t corrupted = 0;
  std::thread owner([&] {
    for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = block_new(sizes[i], i);
    SplitMix64 rng(5);
    for (size_t k = 0; k < blocks.size() / 8; ++k) {
      const size_t i = rng.next() % blocks.size();
      hs_free(blocks[i]);
      blocks[i] = block_new(sizes[i], i);
    }
    owner_pages = stats_now().pages - before.pages;
    rss_made = rss_bytes();
    phase.store(1, std::memory_order_release);
    wait_for(phase, 2);  // out of the allocator meanwhile
    // Awake again: pages given back are carved anew, and every block works.
    std::vector<void*> again(blocks.size());
    for (size_t i = 0; i < again.size(); ++i) again[i] = block_new(sizes[i], i + 7);
    for (size_t i = 0; i < again.size(); ++i) {
      if (!block_intact(again[i], sizes[i], i + 7)) ++corrupted;
      hs_free(again[i]);
    }
  });
  wait_for(phase, 1);
  hs_stats_t swept{};
  size_t rss_swept = 0;
  std::thread freer([&] {
    std::this_thread::sleep_for(kLongerThanIdle);
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (!block_intact(blocks[i], sizes[i], i)) ++corrupted;
      hs_free(blocks[i]);
    }
    // The owner's last pages empty with the last frees: this thread looks at it again from
    // its own allocation slow paths (here, pages of a size of its own made and emptied).
    for (int round = 0; round < 12; ++round) {
      std::this_thread::sleep_for(kLongerThanIdle);
      std::vector<void*> own(16 * 64);
      for (void*& p : own) p = hs_malloc(1000);
      for (void* p : own) hs_free(p);
    }
    swept = stats_now();
    hs_collect(1);  // this thread's own pages go too, before the memory is read
    rss_swept = rss_bytes();
  });
  freer.join();
  EXPECT_EQ(corrupted, 0u);
  const uint64_t given_back = swept.pages_given_back - before.pages_given_back;
  std::printf("owner pages %llu, given back %llu; RSS MiB: before %.1f, made %.1f, swept %.1f\n",
              static_cast<unsigned long long>(owner_pages),
              static_cast<unsigned long long>(given_back), rss_before / 1048576.0,
              rss_made / 1048576.0, rss_swept / 1048576.0);
  // All but each class's first page and the pages still in the owner's full list (those
  // are taken over instead, takeover.cc, when frees into them go on long enough).
  EXPECT_GE(given_back * 10, owner_pages * 8)
      << "pages of an idle owner that emptied were left resident";
  if (!hs_test::kSanitized && !hs_test::under_emulator()) {
    // ~7 MB made; what may stay is each class's first page or two (64 KiB each). (Under
    // sanitizers and emulators the process's RSS moves with their own memory.)
    EXPECT_LT(rss_swept, rss_before + 2 * kMiB)
        << "RSS did not come back after the owner's blocks were freed while it waited";
  }
  phase.store(2, std::memory_order_release);
  owner.join();
  EXPECT_EQ(corrupted, 0u);
  hs_collect(1);
  const hs_stats_t after = stats_now();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.alloc_count - before.alloc_count, after.free_count - before.free_count);
}

// One sweep does a bounded amount of work and the next resumes where it stopped: an owner's
// sixteen 16-byte pages, ahead of its 1 KiB pages in the sweep's order, keep a few live
// blocks each while another thread frees the rest of them (their remote lists, thousands of
// blocks, are counted at every look and never match), and frees all of its 1 KiB blocks. The 1 KiB
// pages are given back all the same: a sweep that started over at the first size every time
// would spend its whole budget on the 16-byte pages and never reach them.
TEST_F(IdleOwner, PagesBehindOnesThatStayPartlyLiveAreReachedAcrossSweeps) {
  constexpr size_t kSmall = 16;
  constexpr size_t kLarge = 1024;
  const size_t small_count = 16 * (64 * 1024 / kSmall);  // sixteen pages' worth
  const size_t large_count = 12 * (64 * 1024 / kLarge);
  std::vector<void*> small(small_count);
  std::vector<void*> large(large_count);
  std::atomic<int> phase{0};
  hs_collect(1);
  const hs_stats_t before = stats_now();
  uint64_t owner_pages = 0;
  size_t corrupted = 0;
  std::thread owner([&] {
    for (size_t i = 0; i < small_count; ++i) small[i] = block_new(kSmall, i);
    for (size_t i = 0; i < large_count; ++i) large[i] = block_new(kLarge, i);
    // The owner frees an eighth itself, so every page has room and sits in its queues (a
    // page parked full would be left to takeover.cc).
    for (size_t i = 7; i < small_count; i += 8) hs_free(std::exchange(small[i], nullptr));
    for (size_t i = 7; i < large_count; i += 8) hs_free(std::exchange(large[i], nullptr));
    owner_pages = stats_now().pages - before.pages;
    phase.store(1, std::memory_order_release);
    wait_for(phase, 2);  // out of the allocator meanwhile
  });
  wait_for(phase, 1);
  uint64_t given_back = 0;
  std::thread freer([&] {
    std::this_thread::sleep_for(kLongerThanIdle);
    // Every 16-byte block but one in 512 (several per page, so none of those pages empties).
    for (size_t i = 0; i < small_count; ++i) {
      if (i % 512 == 0 || small[i] == nullptr) continue;
      if (!block_intact(small[i], kSmall, i)) ++corrupted;
      hs_free(std::exchange(small[i], nullptr));
    }
    for (size_t i = 0; i < large_count; ++i) {
      if (large[i] == nullptr) continue;
      if (!block_intact(large[i], kLarge, i)) ++corrupted;
      hs_free(large[i]);
    }
    // Looks again from this thread's slow paths, one sweep at most per look, until two thirds
    // of the 1 KiB pages are back (10-11 of 12 when the sweep resumes; 0 when it starts
    // over), or long after the budget would have allowed it.
    const uint64_t large_pages = large_count / (64 * 1024 / kLarge);
    for (int round = 0; round < 200; ++round) {
      given_back = stats_now().pages_given_back - before.pages_given_back;
      if (given_back * 3 >= large_pages * 2) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(12));
      std::vector<void*> own(16 * 64);
      for (void*& p : own) p = hs_malloc(1000);
      for (void* p : own) hs_free(p);
    }
  });
  freer.join();
  std::printf("owner pages %llu, given back %llu (of 12 pages of 1 KiB blocks)\n",
              static_cast<unsigned long long>(owner_pages),
              static_cast<unsigned long long>(given_back));
  EXPECT_GE(given_back * 3, uint64_t{12} * 2)
      << "the 1 KiB pages behind the partly live 16-byte ones were not reached";
  phase.store(2, std::memory_order_release);
  owner.join();
  EXPECT_EQ(corrupted, 0u);
  for (size_t i = 0; i < small_count; i += 512) {
    EXPECT_TRUE(block_intact(small[i], kSmall, i));
    hs_free(small[i]);
  }
  hs_collect(1);
  const hs_stats_t after = stats_now();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.alloc_count - before.alloc_count, after.free_count - before.free_count);
}

// The race OwnerSlowPath's lock and the rule "no block live" settle: an owner alternates
// idle spells (its emptied pages are then swept) with bursts in which it frees its own
// blocks and allocates, into the pages being swept at that moment; two threads keep
// replacing blocks (freeing the owner's remotely and making their own). Every block is
// checked on every free.
TEST_F(IdleOwner, OwnerWakingWhileItsPagesAreSweptLosesNothing) {
  constexpr size_t kSlots = 8192;
  BlockSlots slots(kSlots, {16, 48, 64, 112, 256, 640, 1024, 3072});
  std::atomic<bool> stop{false};
  const hs_stats_t before = stats_now();
  // The main thread makes the first block of every slot and then waits in join: it is an idle
  // owner too, whose pages the others empty.
  for (size_t i = 0; i < kSlots; ++i) slots.fill(i);
  std::thread owner([&] {
    SplitMix64 rng(11);
    const int spells = static_cast<int>(scaled(8));
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    // At least `spells` of them, and on until a page was swept (slow sanitized builds need
    // more replacements before a page's blocks are all freed). Past `spells` without a sweep
    // the idle spells grow, up to 8 times as long: on a loaded machine the freers may get too
    // little time in a short one to look at the owner twice and free a page's last blocks.
    auto idle = kLongerThanIdle;
    for (int spell = 0;
         spell < spells || (stats_now().pages_given_back == before.pages_given_back &&
                            std::chrono::steady_clock::now() < give_up);
         ++spell) {
      // A burst: the owner fills a part of the slots anew (its pages), and replaces some of
      // the others' blocks (its own frees, into pages the freers may be emptying).
      for (int k = 0; k < 3000; ++k) slots.replace(rng.next() % kSlots);
      std::this_thread::sleep_for(idle);  // idle: emptied pages may be swept
      if (spell + 1 >= spells && idle < 8 * kLongerThanIdle) idle *= 2;
    }
    stop.store(true, std::memory_order_release);
  });
  std::vector<std::thread> freers;
  for (int t = 0; t < 2; ++t) {
    freers.emplace_back([&, t] {
      SplitMix64 rng(100 + static_cast<uint64_t>(t));
      while (!stop.load(std::memory_order_acquire)) {
        for (int k = 0; k < 256; ++k) slots.replace(rng.next() % kSlots);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  for (std::thread& freer : freers) freer.join();
  owner.join();
  const hs_stats_t mid = stats_now();
  const uint64_t given_back = mid.pages_given_back - before.pages_given_back;
  std::printf("pages given back: %llu\n", static_cast<unsigned long long>(given_back));
  EXPECT_GT(given_back, 0u) << "no page was swept: the race this test is for never ran";
  slots.drain();
  EXPECT_EQ(slots.corrupted(), 0u);
  hs_collect(1);
  const hs_stats_t after = stats_now();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.alloc_count - before.alloc_count, after.free_count - before.free_count);
}

// A buffer freed and made again (a 1 MiB block: a one-block page, kept when it empties) is
// freed without the owner's slow-path lock; the block must still be reused in place and every
// allocation and free counted.
TEST(KeptLargeFree, ABufferFreedAndMadeAgainIsReusedAndCounted) {
  const hs_stats_t before = stats_now();
  constexpr int kPairs = 1000;
  int moved = 0;
  std::thread([&] {
    char* first = static_cast<char*>(hs_malloc(kMiB));
    ASSERT_NE(first, nullptr);
    hs_free(first);
    for (int i = 0; i < kPairs; ++i) {
      char* p = static_cast<char*>(hs_malloc(kMiB));
      ASSERT_NE(p, nullptr);
      if (p != first) ++moved;
      p[0] = static_cast<char>(i);
      p[kMiB - 1] = static_cast<char>(i);
      hs_free(p);
    }
  }).join();
  const hs_stats_t after = stats_now();
  EXPECT_EQ(moved, 0) << "the kept page was not reused";
  EXPECT_EQ(after.alloc_count - before.alloc_count, uint64_t{kPairs + 1});
  EXPECT_EQ(after.free_count - before.free_count, uint64_t{kPairs + 1});
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
}

// The same lock-free free while another thread frees the owner's small blocks and, the
// owner looking idle, sweeps its emptied pages under the owner's lock (pages_given_back
// counts what the sweeps gave back): nothing may be lost or corrupted, and under
// ThreadSanitizer nothing may race.
TEST_F(IdleOwner, KeptLargeFreesRunWhileAnotherThreadSweepsTheOwner) {
  constexpr size_t kSmallBlocks = 4096;  // four pages of 64-byte blocks (1,024 a page)
  constexpr size_t kBig = kMiB / 4;
  const uint64_t given_before = stats_now().pages_given_back;
  std::vector<unsigned char*> small(kSmallBlocks);
  std::atomic<bool> handed{false};
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread owner([&] {
    for (unsigned char*& p : small) {
      p = static_cast<unsigned char*>(hs_malloc(64));
      if (p == nullptr) std::abort();
      p[0] = 0x5A;
    }
    // Half freed by the owner: its pages leave the full list and stay in its queues, where
    // the sweep looks.
    for (size_t i = 1; i < kSmallBlocks; i += 2) {
      hs_free(small[i]);
      small[i] = nullptr;
    }
    handed.store(true, std::memory_order_release);
    // A buffer made and freed every 5 ms: every 16th free runs the purge round under the
    // lock, so the owner still looks idle (no slow path for 10 ms) between them.
    for (unsigned i = 0; !done.load(std::memory_order_acquire); ++i) {
      auto* big = static_cast<unsigned char*>(hs_malloc(kBig));
      if (big == nullptr) std::abort();
      big[0] = big[kBig - 1] = static_cast<unsigned char>(i);
      if (big[0] != static_cast<unsigned char>(i)) bad.fetch_add(1);
      hs_free(big);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  std::thread freer([&] {
    while (!handed.load(std::memory_order_acquire)) std::this_thread::yield();
    // The first three pages at once (they empty, and are not the ones the owner allocates
    // from), then the rest slowly: every 64th free into an owner looks whether it is idle.
    for (size_t i = 0; i < kSmallBlocks; ++i) {
      if (small[i] == nullptr) continue;
      if (small[i][0] != 0x5A) bad.fetch_add(1);
      hs_free(small[i]);
      if (i >= 3 * kSmallBlocks / 4) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    done.store(true, std::memory_order_release);
  });
  owner.join();
  freer.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(stats_now().pages_given_back - given_before, 0u)
      << "no sweep of the owner ran beside its frees: the test did not test";
}

}  // namespace
