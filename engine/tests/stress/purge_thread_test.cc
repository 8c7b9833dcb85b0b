// The background purger (option purge_thread): memory a process freed goes back to the OS
// while no thread calls the allocator, from live threads' segments, exited threads' segments
// and the huge cache; without it the same memory stays resident (the control); its purges
// run beside owners that keep allocating (ThreadSanitizer sees the locking); a forked child
// starts its own; by default it starts once exited pool threads leave memory worth holding,
// and never at option 0.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::kMiB;
using hs_test::rss_bytes;
using hs_test::scaled;
using hs_test::SplitMix64;

// Whether a thread named `name` runs in this process.
bool thread_named(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) return true;
  }
  return false;
}

// 40 MB of 1,000-byte blocks written and freed, then one 32 MiB block written and freed:
// segments' free slices and a huge cache entry, all resident when it returns. The first
// `keep` blocks (on the first two pages) are kept and returned, so the segment is not empty.
std::vector<void*> allocate_and_free(size_t keep) {
  std::vector<void*> blocks(40000);
  for (void*& p : blocks) {
    p = hs_malloc(1000);
    if (p == nullptr) std::abort();
    std::memset(p, 0x5a, 1000);
  }
  std::vector<void*> kept;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i < keep) {
      kept.push_back(blocks[i]);
    } else {
      hs_free(blocks[i]);
    }
  }
  void* big = hs_malloc(32 * kMiB);
  if (big == nullptr) std::abort();
  std::memset(big, 0x5a, 32 * kMiB);
  hs_free(big);
  return kept;
}

// Switches the purge thread on once the work is done and measured (hs_option_set starts it
// at once): on a loaded machine the work can take long enough for a running thread to purge
// part of it before it is measured.
void start_purge_thread_now() { hs_option_set(hs_option_purge_thread, 1); }

// The lowest RSS seen while waiting up to `wait_ms` without calling the allocator, stopping
// early once it is at or below `target`.
size_t lowest_rss_while_idle(int wait_ms, size_t target) {
  size_t lowest = rss_bytes();
  for (int waited = 0; waited < wait_ms && lowest > target; waited += 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    lowest = std::min(lowest, rss_bytes());
  }
  return lowest;
}

TEST(PurgeThread, GivesBackWhatAnIdleProcessFreed) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  const size_t before = rss_bytes();
  allocate_and_free(0);
  const size_t after = rss_bytes();
  ASSERT_GE(after, before + 60 * kMiB) << "the work did not leave its memory resident";
  start_purge_thread_now();
  EXPECT_TRUE(thread_named("hs-purge")) << "no purge thread after an allocation asked for it";
  const size_t lowest = lowest_rss_while_idle(3000, before + 8 * kMiB);
  EXPECT_LE(lowest, before + 8 * kMiB)
      << "RSS " << before / kMiB << " MiB before, " << after / kMiB << " after the work, "
      << lowest / kMiB << " at best after 3 s idle";
}

// The control: the same work and wait without the thread, in a child process (a thread
// started by an earlier test in this process does not survive fork, and with the option off
// the child starts none). If this failed, the test above would not tell the thread's purges
// from the allocator's own.
TEST(PurgeThread, WithoutItAnIdleProcessKeepsWhatItFreed) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  hs_option_set(hs_option_purge_thread, 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const size_t before = rss_bytes();
    allocate_and_free(0);
    const size_t after = rss_bytes();
    if (after < before + 60 * kMiB) _exit(2);
    const size_t lowest = lowest_rss_while_idle(1500, before + 8 * kMiB);
    _exit(thread_named("hs-purge") ? 3 : lowest + 10 * kMiB < after ? 4 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 2) << "the work did not leave its memory resident";
  EXPECT_NE(WEXITSTATUS(status), 3) << "a purge thread ran with the option off";
  EXPECT_NE(WEXITSTATUS(status), 4) << "memory went back with no purge thread and no call";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// An exited thread's segment, still holding blocks (so it stays mapped), waits on the
// abandoned list; the purge thread purges its free slices after their deadline.
TEST(PurgeThread, GivesBackAnExitedThreadsFreeMemory) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  const size_t before = rss_bytes();
  std::vector<void*> kept;
  std::thread worker([&kept] { kept = allocate_and_free(100); });
  worker.join();
  const size_t after = rss_bytes();
  ASSERT_GE(after, before + 30 * kMiB);
  start_purge_thread_now();
  EXPECT_TRUE(thread_named("hs-purge")) << "no purge thread after an allocation asked for it";
  const size_t lowest = lowest_rss_while_idle(3000, before + 8 * kMiB);
  EXPECT_LE(lowest, before + 8 * kMiB)
      << "RSS " << before / kMiB << " MiB before, " << after / kMiB << " after the thread, "
      << lowest / kMiB << " at best after 3 s idle";
  for (void* p : kept) {
    EXPECT_EQ(static_cast<unsigned char*>(p)[999], 0x5a);
    hs_free(p);
  }
}

// A pool thread's work: 8 MiB of buffers made, written and freed, and one small block left
// for its joiner to free (which empties the thread's segment once it has exited).
constexpr size_t kPoolBuffer = 256 * hs_test::kKiB;
constexpr int kPoolBuffers = 32;
constexpr long kPoolPages = static_cast<long>(kPoolBuffers * kPoolBuffer / 4096);

void* drain_buffers_leaving_one_block() {
  void* left = hs_malloc(100);
  std::vector<void*> buffers;
  for (int i = 0; i < kPoolBuffers; ++i) {
    buffers.push_back(hs_malloc(kPoolBuffer));
    if (buffers.back() == nullptr) std::abort();
    std::memset(buffers.back(), 0x5a, kPoolBuffer);
  }
  for (void* p : buffers) hs_free(p);
  return left;
}

// One pool thread run and joined, and its block freed by the joiner (or, with
// `frees_its_block`, by the thread itself before it exits); the minor faults the thread took.
long run_pool_thread(bool frees_its_block = false) {
  void* left = nullptr;
  long faults = -1;
  std::thread([&] {
    const long start = hs_test::minor_faults();
    left = drain_buffers_leaving_one_block();
    if (frees_its_block) hs_free(std::exchange(left, nullptr));
    faults = hs_test::minor_faults() - start;
  }).join();
  hs_free(left);
  return faults;
}

// An allocation that always takes the slow path (a huge block), where a wanted thread starts.
void allocate_on_the_slow_path() { hs_free(hs_malloc(5 * kMiB)); }

// Waits up to a second for the purge thread to show in /proc.
bool purge_thread_shows() {
  for (int waited = 0; waited < 1000; waited += 10) {
    if (thread_named("hs-purge")) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// With the purge thread running: a pool thread's emptied segment is held (RSS stays up), the
// next thread reuses its memory (at most an eighth of its pages faulted in), and with no
// allocator call the thread gives it back on the deadline. `before`: RSS before the pool.
void expect_held_for_the_next_thread_then_returned(size_t before, bool frees_its_block = false) {
  run_pool_thread(frees_its_block);
  const size_t held = rss_bytes();
  const long faults = run_pool_thread(frees_its_block);
  EXPECT_GE(held, before + 6 * kMiB) << "the emptied segment was not held";
  EXPECT_LE(faults, kPoolPages / 8) << faults << " minor page faults writing " << kPoolPages
                                    << " pages the thread before had left resident";
  const size_t lowest = lowest_rss_while_idle(3000, before + 4 * kMiB);
  EXPECT_LE(lowest, before + 4 * kMiB) << "RSS " << before / kMiB << " MiB before, " << held / kMiB
                                       << " held, " << lowest / kMiB << " at best after 3 s idle";
}

// With the thread on, a segment its owner had drained before it exited, emptied since by an
// older thread (a joiner freeing the few blocks a worker left), is held whole for the next
// thread, which reuses its memory without faults, and unmapped on the deadline while nobody
// calls the allocator. Trimmed to the kept budget at once instead (as without the thread,
// where only allocator calls would unmap a held one), the next thread faulted in 1,295 of
// its 2,048 pages here.
TEST(PurgeThread, HoldsASegmentAJoinerEmptiedForTheNextThread) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  start_purge_thread_now();
  expect_held_for_the_next_thread_then_returned(rss_bytes());
}

// A pool worker that frees all it made before it exits leaves its segment empty at its exit:
// with the thread on, that segment is held whole for the next worker too. Trimmed to the kept
// budget at exit instead, the next worker faulted most of its pages in again.
TEST(PurgeThread, HoldsTheSegmentAWorkerEmptiedItselfForTheNextThread) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  start_purge_thread_now();
  expect_held_for_the_next_thread_then_returned(rss_bytes(), true);
}

// The control: a producer whose blocks another thread freed (collected at its exit) leaves its
// segment empty too, but not held: the next producers run beside it with memory of their own.
// Its exit gives the memory back at once, down to the kept budget (3 MiB).
TEST(PurgeThread, DoesNotHoldTheSegmentOfAProducerWhoseBlocksOthersFreed) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  start_purge_thread_now();
  const size_t before = rss_bytes();
  std::vector<void*> handed;
  std::atomic<bool> made{false};
  std::atomic<bool> freed{false};
  std::thread producer([&] {
    for (int i = 0; i < kPoolBuffers; ++i) {
      void* p = hs_malloc(kPoolBuffer);
      if (p == nullptr) std::abort();
      std::memset(p, 0x5a, kPoolBuffer);
      handed.push_back(p);
    }
    made.store(true);
    while (!freed.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!made.load()) std::this_thread::yield();
  for (void* p : handed) hs_free(p);  // remote frees into the producer's pages
  freed.store(true);
  producer.join();
  const size_t after_exit = rss_bytes();
  EXPECT_LE(after_exit, before + 4 * kMiB)
      << "RSS " << before / kMiB << " MiB before, " << after_exit / kMiB
      << " MiB after the producer's exit: its emptied segment was held";
}

// By default (option -1) nothing starts the thread until a pool thread's drained segment is
// worth holding: that free asks for it, the next allocation slow path starts it, and from then
// on the next threads find the memory held, which the thread gives back on the deadline.
TEST(PurgeThread, StartsOnItsOwnOnceAPoolThreadLeavesMemoryWorthHolding) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  ASSERT_EQ(hs_option_get(hs_option_purge_thread), -1) << "not the default";
  if (thread_named("hs-purge")) GTEST_SKIP() << "started by an earlier test of this process";
  // Pool threads that drained 1 MiB each, emptied the same way, do not start it: a hold
  // of so little is not worth a thread.
  for (int i = 0; i < 4; ++i) {
    void* left = nullptr;
    std::thread([&left] {
      left = hs_malloc(100);
      void* buffers[8];
      for (void*& p : buffers)
        std::memset(p = hs_malloc(128 * hs_test::kKiB), 0x5a, 128 * hs_test::kKiB);
      for (void* p : buffers) hs_free(p);
    }).join();
    hs_free(left);
  }
  allocate_on_the_slow_path();
  EXPECT_FALSE(thread_named("hs-purge")) << "started for threads that left nothing to hold";
  const size_t before = rss_bytes();
  run_pool_thread();
  allocate_on_the_slow_path();
  ASSERT_TRUE(purge_thread_shows()) << "no purge thread after a pool thread's segment emptied";
  expect_held_for_the_next_thread_then_returned(before);
}

// The same start from workers that free everything they made themselves before they exit
// (nothing left for a joiner): their segments, empty at exit, ask for the thread.
TEST(PurgeThread, StartsOnItsOwnOnceAWorkerLeavesItsSegmentEmptyAtExit) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  ASSERT_EQ(hs_option_get(hs_option_purge_thread), -1) << "not the default";
  if (thread_named("hs-purge")) GTEST_SKIP() << "started by an earlier test of this process";
  const size_t before = rss_bytes();
  run_pool_thread(true);
  allocate_on_the_slow_path();
  ASSERT_TRUE(purge_thread_shows()) << "no purge thread after a worker drained its segment";
  expect_held_for_the_next_thread_then_returned(before, true);
}

// The control: with the option at 0 the same pool never starts it, and each joiner's free
// gives the exited thread's memory back at once (down to the kept budget of 3 MiB).
TEST(PurgeThread, OptionZeroKeepsItOffAndReturnsAPoolsMemoryAtOnce) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  if (thread_named("hs-purge")) GTEST_SKIP() << "started by an earlier test of this process";
  hs_option_set(hs_option_purge_thread, 0);
  const size_t before = rss_bytes();
  size_t highest_after_free = 0;
  for (int i = 0; i < 4; ++i) {
    run_pool_thread();
    allocate_on_the_slow_path();
    highest_after_free = std::max(highest_after_free, rss_bytes());
  }
  EXPECT_FALSE(purge_thread_shows()) << "started with the option at 0";
  EXPECT_LE(highest_after_free, before + 4 * kMiB)
      << "RSS " << before / kMiB << " MiB before, " << highest_after_free / kMiB
      << " MiB after a joiner emptied an exited thread's segment";
  hs_option_set(hs_option_purge_thread, -1);
}

// Owners allocate, pause (long enough to look idle to the purge thread, holding live blocks)
// and go on, while the thread purges every 10 ms: every block keeps its contents.
TEST(PurgeThread, OwnersWorkOnWhileItPurges) {
  hs_option_set(hs_option_purge_delay, 1);
  hs_option_set(hs_option_purge_delay_max, 20);
  hs_option_set(hs_option_purge_thread, 1);
  const size_t rounds = scaled(60);
  std::vector<std::thread> owners;
  std::vector<int> bad(2, 0);
  for (int t = 0; t < 2; ++t) {
    owners.emplace_back([t, rounds, &bad] {
      SplitMix64 rng(static_cast<uint64_t>(t) + 7);
      std::vector<std::pair<unsigned char*, size_t>> live;
      for (size_t round = 0; round < rounds; ++round) {
        for (int i = 0; i < 200; ++i) {
          const size_t size =
              rng.below(8) == 0 ? rng.between(4096, 256 * 1024) : rng.between(16, 2048);
          auto* p = static_cast<unsigned char*>(hs_malloc(size));
          if (p == nullptr) std::abort();
          std::memset(p, static_cast<int>(size & 0xff), size);
          live.emplace_back(p, size);
        }
        if (rng.below(3) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(15));
        // Free about half, checking each block's bytes first.
        for (size_t i = 0; i < live.size();) {
          if (rng.below(2) == 0) {
            ++i;
            continue;
          }
          auto [p, size] = live[i];
          if (p[0] != static_cast<unsigned char>(size & 0xff) ||
              p[size - 1] != static_cast<unsigned char>(size & 0xff)) {
            ++bad[static_cast<size_t>(t)];
          }
          hs_free(p);
          live[i] = live.back();
          live.pop_back();
        }
      }
      for (auto [p, size] : live) {
        if (p[size / 2] != static_cast<unsigned char>(size & 0xff)) ++bad[static_cast<size_t>(t)];
        hs_free(p);
      }
    });
  }
  for (std::thread& owner : owners) owner.join();
  EXPECT_EQ(bad[0] + bad[1], 0) << "blocks changed while the purge thread ran";
  EXPECT_TRUE(thread_named("hs-purge"));
}

// The child of a fork has no purge thread (threads do not survive fork): it starts its own.
TEST(PurgeThread, AForkedChildRunsItsOwn) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  hs_option_set(hs_option_purge_thread, 1);
  hs_free(hs_malloc(100));
  ASSERT_TRUE(thread_named("hs-purge"));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const size_t before = rss_bytes();
    allocate_and_free(0);
    const bool started = thread_named("hs-purge");
    const size_t lowest = lowest_rss_while_idle(3000, before + 8 * kMiB);
    _exit(!started ? 2 : lowest > before + 8 * kMiB ? 3 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 2) << "the child started no purge thread";
  EXPECT_NE(WEXITSTATUS(status), 3) << "the child's idle memory was not given back";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
