// The concurrent half of the degenerate suite: 184 threads created and joined over repeated
// rounds (live threads back to 1, memory flat), a multi-threaded stress test with cross-thread
// frees and content checks before every free, and fork() while other threads allocate.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#if !defined(_WIN32)  // fork and its waiting: Windows has no fork (engine/docs/platforms.md)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <latch>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::check_pattern;
using hs_test::fill_pattern;
using hs_test::kKiB;
using hs_test::kMiB;
using hs_test::rss_bytes;
using hs_test::scaled;
using hs_test::SplitMix64;
using hs_test::stats_now;

struct Block {
  void* p;
  size_t size;
  uint64_t seed;
};

bool block_ok(const Block& b) { return check_pattern(b.p, b.size, b.seed) == SIZE_MAX; }

Block make_block(size_t n, uint64_t seed, hs_heap_t* heap = nullptr) {
  void* p = heap != nullptr ? hs_heap_malloc(heap, n) : hs_malloc(n);
  if (p != nullptr) fill_pattern(p, n, seed);
  return {p, n, seed};
}

// ---- 184 threads ------------------------------------------------------------------------------

TEST(Threads, ChurnOf184ThreadsReturnsToOneAndStaysFlat) {
  constexpr int kThreads = 184;
  const size_t rounds = std::max<size_t>(4, std::min<size_t>(scaled(10), 80));
  const hs_stats_t start = stats_now();
  ASSERT_EQ(start.threads, 1u) << "only the main thread has a heap before the test";
  std::vector<size_t> rss_after;
  std::vector<uint64_t> committed_after;
  std::vector<uint64_t> segments_after;
  for (size_t round = 0; round < rounds; ++round) {
    // Blocks the main thread allocates for the workers to free (remote frees into our pages).
    std::vector<Block> from_main(kThreads);
    for (int t = 0; t < kThreads; ++t) from_main[t] = make_block(64 + t * 8, t);
    // Workers make no glibc allocations (fixed arrays, storage reserved here), so the RSS
    // measured below is the engine's plus thread stacks, not glibc's per-thread arenas.
    constexpr size_t kPerThread = 201;
    std::vector<std::array<Block, kPerThread>> leftovers(kThreads);
    std::vector<size_t> leftover_count(kThreads, 0);
    std::atomic<int> bad{0};
    std::latch all_allocated(kThreads + 1);
    std::latch may_exit(1);
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        SplitMix64 rng(round * 1000 + static_cast<uint64_t>(t));
        std::array<Block, kPerThread> mine;
        for (size_t i = 0; i + 1 < kPerThread; ++i) {
          mine[i] = make_block(rng.between(16, 2048), rng.next());
        }
        mine[kPerThread - 1] = make_block(100 * kKiB, rng.next());
        if (!block_ok(from_main[t])) bad.fetch_add(1);
        hs_free(from_main[t].p);
        for (size_t i = 0; i < kPerThread; ++i) {
          if (mine[i].p == nullptr || !block_ok(mine[i])) bad.fetch_add(1);
          if (i % 2 == 0) {
            hs_free(mine[i].p);
          } else {
            leftovers[t][leftover_count[t]++] = mine[i];
          }
        }
        all_allocated.count_down();
        may_exit.wait();  // all 184 hold their heaps at once
      });
    }
    all_allocated.arrive_and_wait();
    const hs_stats_t during = stats_now();
    may_exit.count_down();
    for (auto& th : threads) th.join();
    EXPECT_EQ(bad.load(), 0) << "round " << round;
    EXPECT_EQ(during.threads, start.threads + kThreads) << "round " << round;
    for (int t = 0; t < kThreads; ++t) {
      for (size_t i = 0; i < leftover_count[t]; ++i) {
        ASSERT_TRUE(block_ok(leftovers[t][i])) << "leftover of an exited thread, round " << round;
        hs_free(leftovers[t][i].p);
      }
    }
    const hs_stats_t after = stats_now();
    ASSERT_EQ(after.threads, 1u) << "round " << round << ": live threads back to 1";
    EXPECT_EQ(after.allocated_bytes, start.allocated_bytes) << "round " << round;
    EXPECT_EQ(after.heaps, start.heaps) << "round " << round;
    rss_after.push_back(rss_bytes());
    committed_after.push_back(after.committed_bytes);
    segments_after.push_back(after.segments);
  }
  // Later rounds may not keep more than the first two did (plus slack): exited threads'
  // memory is reclaimed and reused, not leaked.
  size_t rss_base = 0;
  uint64_t committed_base = 0;
  uint64_t segments_base = 0;
  for (size_t r = 0; r < 2 && r < rounds; ++r) {
    rss_base = rss_after[r] > rss_base ? rss_after[r] : rss_base;
    committed_base = committed_after[r] > committed_base ? committed_after[r] : committed_base;
    segments_base = segments_after[r] > segments_base ? segments_after[r] : segments_base;
  }
  for (size_t r = 2; r < rounds; ++r) {
    EXPECT_LE(committed_after[r], committed_base + 16 * kMiB) << "round " << r;
    EXPECT_LE(segments_after[r], segments_base + 4) << "round " << r;
    // The engine's own counters above hold everywhere; RSS only where it is the program's.
    if (!hs_test::kSanitized && !hs_test::under_emulator()) {
      EXPECT_LE(rss_after[r], rss_base + 16 * kMiB)
          << "round " << r << ": RSS " << rss_after[r] << " vs " << rss_base << " (committed "
          << committed_after[r] << " vs " << committed_base << ")";
    }
  }
}

// ---- cross-thread stress ------------------------------------------------------------------------

struct Inbox {
  std::mutex mu;
  std::vector<Block> blocks;
};

TEST(Threads, CrossThreadFreesWithContentChecks) {
  const int kWorkers = hs_test::kSanitized ? 4 : 6;
  const size_t ops = scaled(100000);
  const hs_stats_t start = stats_now();
  std::vector<Inbox> inboxes(static_cast<size_t>(kWorkers));
  std::atomic<uint64_t> bad{0};
  std::atomic<uint64_t> failed_allocs{0};
  std::barrier sync(kWorkers);

  auto worker = [&](int self) {
    SplitMix64 rng(0xC0FFEE + static_cast<uint64_t>(self));
    hs_heap_t* heap = hs_heap_new();  // a quarter of the blocks come from a first-class heap
    std::vector<Block> local;
    uint64_t next_seed = static_cast<uint64_t>(self) << 40;
    auto free_block = [&](const Block& b) {
      if (!block_ok(b)) bad.fetch_add(1);
      hs_free(b.p);
    };
    auto drain_inbox = [&] {
      std::vector<Block> got;
      {
        std::lock_guard<std::mutex> lock(inboxes[static_cast<size_t>(self)].mu);
        got.swap(inboxes[static_cast<size_t>(self)].blocks);
      }
      for (const Block& b : got) free_block(b);
    };
    for (size_t op = 0; op < ops; ++op) {
      const uint64_t r = rng.next() % 1000;
      size_t n;
      if (r < 850) {
        n = rng.between(1, 256);
      } else if (r < 990) {
        n = rng.between(257, 32 * kKiB);
      } else {
        n = rng.between(32 * kKiB, 600 * kKiB);
      }
      Block b = make_block(n, ++next_seed, rng.next() % 4 == 0 ? heap : nullptr);
      if (b.p == nullptr) {
        failed_allocs.fetch_add(1);
        continue;
      }
      if (rng.next() % 2 == 0) {
        const size_t to = rng.next() % static_cast<size_t>(kWorkers);
        std::lock_guard<std::mutex> lock(inboxes[to].mu);
        inboxes[to].blocks.push_back(b);
      } else {
        local.push_back(b);
        if (local.size() > 2000) {
          const size_t i = rng.next() % local.size();
          free_block(local[i]);
          local[i] = local.back();
          local.pop_back();
        }
      }
      if (op % 64 == 0) drain_inbox();
    }
    for (const Block& b : local) free_block(b);
    sync.arrive_and_wait();  // nobody sends any more
    drain_inbox();
    sync.arrive_and_wait();  // every block of every heap is freed
    hs_heap_destroy(heap);
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < kWorkers; ++i) threads.emplace_back(worker, i);
  worker(0);
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0u) << "blocks whose contents changed before their free";
  EXPECT_EQ(failed_allocs.load(), 0u);
  const hs_stats_t end = stats_now();
  EXPECT_EQ(end.allocated_bytes, start.allocated_bytes);
  EXPECT_EQ(end.alloc_count - start.alloc_count, end.free_count - start.free_count);
  EXPECT_EQ(end.threads, start.threads);
  EXPECT_EQ(end.heaps, start.heaps);
}

// An owner fills pages of 64-byte blocks (they park in its full list) and waits while another
// thread frees every block. The first free into each parked page raises the owner's hint; its
// next allocation sees the hint and takes the pages back, so round after round it allocates on
// the same few pages. A free whose announcement were lost would leave its page parked with
// its blocks freed and the owner making fresh pages beside it, three more every round.
TEST(Threads, FullPagesEmptiedByAnotherThreadAreReusedByTheirOwnerRoundAfterRound) {
  constexpr size_t kBlocks = 3 * 1024;  // three pages of 64-byte blocks
  const int rounds = hs_test::kSanitized ? 100 : 400;
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  std::vector<void*> blocks(kBlocks);
  std::atomic<int> handed{0};
  std::atomic<int> freed{0};
  std::thread freer([&] {
    for (int round = 1; round <= rounds; ++round) {
      while (handed.load(std::memory_order_acquire) < round) std::this_thread::yield();
      for (void* p : blocks) hs_free(p);
      freed.store(round, std::memory_order_release);
    }
  });
  std::vector<uintptr_t> page_bases;
  size_t failed = 0;
  for (int round = 1; round <= rounds; ++round) {
    for (void*& p : blocks) {
      p = hs_heap_malloc(heap, 64);
      if (p == nullptr) {
        ++failed;  // the freer frees nullptr: nothing
        continue;
      }
      page_bases.push_back(reinterpret_cast<uintptr_t>(p) & ~uintptr_t{64 * kKiB - 1});
    }
    handed.store(round, std::memory_order_release);
    while (freed.load(std::memory_order_acquire) < round) std::this_thread::yield();
  }
  freer.join();
  hs_heap_destroy(heap);
  std::sort(page_bases.begin(), page_bases.end());
  const size_t distinct =
      static_cast<size_t>(std::unique(page_bases.begin(), page_bases.end()) - page_bases.begin());
  EXPECT_EQ(failed, 0u);
  EXPECT_LE(distinct, 6u) << "64 KiB ranges the owner's blocks came from over " << rounds
                          << " rounds of three pages' worth";
}

// ---- frees into exited threads' segments ------------------------------------------------------

// Producers allocate and exit; then several threads free their blocks at once (each free into
// an abandoned page adopts that segment, racing the others for it) while another thread
// allocates large spans (which reclaims abandoned segments from the other end).
TEST(Threads, FreesIntoExitedThreadsSegmentsRaceWithReclaim) {
  constexpr int kProducers = 4;
  constexpr int kFreers = 4;
  const size_t per_producer = hs_test::kSanitized ? 3000 : 8000;
  const int rounds = hs_test::kSanitized ? 2 : 3;
  hs_collect(1);
  const hs_stats_t start = stats_now();
  std::atomic<uint64_t> bad{0};
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::vector<Block>> made(kProducers);
    {
      std::vector<std::thread> producers;
      for (int t = 0; t < kProducers; ++t) {
        producers.emplace_back([&made, t, round] {
          SplitMix64 rng(0xAB0 + static_cast<uint64_t>(round * kProducers + t));
          for (size_t i = 0; i < per_producer; ++i) {
            const size_t n =
                rng.next() % 16 == 0 ? rng.between(2 * kKiB, 100 * kKiB) : rng.between(8, 512);
            made[static_cast<size_t>(t)].push_back(make_block(n, rng.next()));
          }
        });
      }
      for (auto& th : producers) th.join();
    }
    std::atomic<bool> freeing{true};
    std::thread allocator([&freeing] {
      std::vector<void*> held;
      while (freeing.load(std::memory_order_relaxed)) {
        held.push_back(hs_malloc(1 * kMiB + 64 * kKiB));
        if (held.size() == 8) {
          for (void* p : held) hs_free(p);
          held.clear();
        }
      }
      for (void* p : held) hs_free(p);
    });
    {
      std::vector<std::thread> freers;
      for (int f = 0; f < kFreers; ++f) {
        freers.emplace_back([&made, &bad, f] {
          // Interleaved: every freer touches every producer's pages.
          for (const auto& blocks : made) {
            for (size_t i = static_cast<size_t>(f); i < blocks.size(); i += kFreers) {
              if (blocks[i].p == nullptr || !block_ok(blocks[i])) bad.fetch_add(1);
              hs_free(blocks[i].p);
            }
          }
        });
      }
      for (auto& th : freers) th.join();
    }
    freeing.store(false);
    allocator.join();
  }
  EXPECT_EQ(bad.load(), 0u) << "blocks missing or changed before their free";
  // Every block is freed, so no segment may stay abandoned once a live thread looks but the
  // empty ones kept for the next thread that needs a segment (at most two, thread.cc): the
  // unforced collection adopts only segments that were freed into after their thread
  // exited (including frees that raced the exit), it does not sweep the whole list.
  hs_free(hs_malloc(16));  // this thread has a heap to collect with
  hs_collect(0);
  EXPECT_LE(stats_now().abandoned_segments, start.abandoned_segments + 2)
      << "a segment freed into while its thread exited stayed abandoned";
  hs_collect(1);
  const hs_stats_t end = stats_now();
  EXPECT_EQ(end.allocated_bytes, start.allocated_bytes);
  EXPECT_EQ(end.threads, start.threads);
}

// ---- fork ---------------------------------------------------------------------------------------
#if !defined(_WIN32)

// The child's work; returns 0 or the number of the check that failed.
int child_work(const Block& inherited) {
  if (!block_ok(inherited)) return 10;
  hs_free(inherited.p);  // a block the parent allocated before the fork
  // No C++ containers here: under ASan they allocate from the sanitizer's allocator, whose
  // locks another parent thread may have held at fork() (its children then deadlock).
  std::array<Block, 128> blocks{};
  size_t count = 0;
  for (size_t n :
       {size_t{8}, size_t{100}, size_t{3000}, 50 * kKiB, 700 * kKiB, 5 * kMiB, 9 * kMiB}) {
    // One block of each large and huge size: every page a child faults in costs time on this
    // path (40 MiB per child made each fork take half a second), and one block per size
    // reaches the same code as twenty.
    for (int i = 0; i < (n > 512 * kKiB ? 1 : 20); ++i) {
      Block b = make_block(n, n + static_cast<size_t>(i));
      if (b.p == nullptr) return 11;
      blocks[count++] = b;
    }
  }
  void* r = hs_realloc(blocks[0].p, 200 * kKiB);
  if (r == nullptr || check_pattern(r, blocks[0].size, blocks[0].seed) != SIZE_MAX) return 12;
  blocks[0].p = r;
  hs_heap_t* heap = hs_heap_new();
  if (heap == nullptr) return 13;
  for (int i = 0; i < 100; ++i) {
    if (hs_heap_malloc(heap, 64) == nullptr) return 14;
  }
  hs_heap_destroy(heap);
  for (size_t i = 0; i < count; ++i) {
    if (!block_ok(blocks[i])) return 15;
    hs_free(blocks[i].p);
  }
  hs_stats_t s;
  std::memset(&s, 0, sizeof(s));
  s.size = sizeof(s);
  s.version = HS_STATS_VERSION;
  if (hs_stats_get(&s) != 0) return 16;
  return 0;
}

// Four threads churn huge blocks of 4.5-16 MiB (some grown by realloc, some freed by another
// thread): the shared huge cache cuts, merges and moves their pages under all of them, and
// every block keeps its own bytes until it is freed.
TEST(Threads, HugeBlocksChurnedByFourThreadsKeepTheirBytes) {
  constexpr int kThreads = 4;
  const int rounds = static_cast<int>(scaled(60));
  const uint64_t huge_before = stats_now().huge_count;
  std::atomic<size_t> bad{0};
  std::mutex handoff_lock;
  std::vector<std::pair<void*, std::pair<size_t, uint64_t>>> handoff;  // block, size, seed
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      SplitMix64 rng(7100 + static_cast<uint64_t>(t));
      struct Held {
        void* p;
        size_t n;
        uint64_t seed;
      };
      std::vector<Held> held;
      auto release = [&](const Held& h) {
        if (check_pattern(h.p, h.n, h.seed) != SIZE_MAX) bad.fetch_add(1);
        hs_free(h.p);
      };
      for (int r = 0; r < rounds; ++r) {
        const size_t n = rng.between(9 * kMiB / 2, 16 * kMiB);
        const uint64_t seed = rng.next();
        void* p = hs_malloc(n);
        if (p == nullptr) std::abort();
        fill_pattern(p, n, seed);
        held.push_back({p, n, seed});
        if (rng.below(4) == 0) {  // grow one: its pages move, unresized, when it cannot grow
          Held& h = held[rng.below(held.size())];
          if (check_pattern(h.p, h.n, h.seed) != SIZE_MAX) bad.fetch_add(1);
          const size_t grown = h.n + rng.between(kMiB, 8 * kMiB);
          void* q = hs_realloc(h.p, grown);
          if (q == nullptr) std::abort();
          if (check_pattern(q, h.n, h.seed) != SIZE_MAX) bad.fetch_add(1);
          h = {q, grown, h.seed ^ 1};
          fill_pattern(q, grown, h.seed);
        }
        if (held.size() > 3) {
          const size_t victim = rng.below(held.size());
          if (rng.below(2) == 0) {
            std::lock_guard<std::mutex> guard(handoff_lock);
            handoff.push_back({held[victim].p, {held[victim].n, held[victim].seed}});
          } else {
            release(held[victim]);
          }
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(victim));
        }
        std::vector<std::pair<void*, std::pair<size_t, uint64_t>>> theirs;
        {
          std::lock_guard<std::mutex> guard(handoff_lock);
          theirs.swap(handoff);
        }
        for (auto& [q, what] : theirs) release({q, what.first, what.second});
      }
      for (const Held& h : held) release(h);
    });
  }
  for (auto& thread : threads) thread.join();
  for (auto& [q, what] : handoff) {
    if (check_pattern(q, what.first, what.second) != SIZE_MAX) bad.fetch_add(1);
    hs_free(q);
  }
  EXPECT_EQ(bad.load(), 0u) << "huge blocks whose bytes changed while they were live";
  EXPECT_EQ(stats_now().huge_count, huge_before);
}

TEST(Fork, ChildAllocatesWhileParentThreadsHoldMemory) {
  constexpr int kBusy = 3;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0};
  std::vector<std::thread> busy;
  busy.reserve(kBusy);
  for (int t = 0; t < kBusy; ++t) {
    busy.emplace_back([&, t] {
      SplitMix64 rng(77 + static_cast<uint64_t>(t));
      std::vector<Block> held;  // ~2000 blocks live at all times
      for (uint64_t op = 1; !stop.load(std::memory_order_relaxed); ++op) {
        // Busy but not hogging the CPUs the child and the forking thread need.
        if (op % 256 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
        held.push_back(make_block(rng.between(16, 8 * kKiB), rng.next()));
        if (held.size() > 2000) {
          const size_t i = rng.next() % held.size();
          if (!block_ok(held[i])) bad.fetch_add(1);
          hs_free(held[i].p);
          held[i] = held.back();
          held.pop_back();
        }
      }
      for (const Block& b : held) {
        if (!block_ok(b)) bad.fetch_add(1);
        hs_free(b.p);
      }
    });
  }
  struct StopAndJoin {  // also on an early ASSERT return
    StopAndJoin(std::atomic<bool>& s, std::vector<std::thread>& t) : stop(s), threads(t) {}
    StopAndJoin(const StopAndJoin&) = delete;
    StopAndJoin& operator=(const StopAndJoin&) = delete;
    ~StopAndJoin() {
      stop.store(true);
      for (auto& t : threads) t.join();
    }
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
  };
  std::optional<StopAndJoin> guard;
  guard.emplace(stop, busy);
  const size_t forks = std::max<size_t>(5, std::min<size_t>(scaled(20), 200));
  for (size_t i = 0; i < forks; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const Block inherited = make_block(1000 + i, i);
    ASSERT_NE(inherited.p, nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      alarm(20);  // a deadlocked child dies of SIGALRM instead of hanging the test
      _exit(child_work(inherited));
    }
    int status = 0;
    if (!hs_test::wait_child(pid, &status, 30000)) {
      FAIL() << "fork " << i << ": child hung for 30 s (allocator lock held across fork?)";
    }
    ASSERT_TRUE(WIFEXITED(status)) << "fork " << i << ": child killed by signal "
                                   << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    ASSERT_EQ(WEXITSTATUS(status), 0)
        << "fork " << i << ": child failed check " << WEXITSTATUS(status);
    EXPECT_TRUE(block_ok(inherited)) << "the parent's copy is untouched";
    hs_free(inherited.p);
  }
  guard.reset();
  EXPECT_EQ(bad.load(), 0u);
}
#endif

}  // namespace
