// The background purger (option purge_thread): memory a process freed goes back to the OS
// while no thread calls the allocator, from live threads' segments, exited threads' segments
// and the huge cache; without it the same memory stays resident (the control); its purges
// run beside owners that keep allocating (ThreadSanitizer sees the locking); a forked child
// starts its own.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
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

// With the thread on, a segment its owner had drained before it exited, emptied since by an
// older thread (a joiner freeing the few blocks a worker left), is held whole for the next
// thread, which reuses its memory without faults, and unmapped on the deadline while nobody
// calls the allocator. Trimmed to the kept budget at once instead (as without the thread,
// where only allocator calls would unmap a held one), the next thread faulted in 1,295 of
// its 2,048 pages here.
TEST(PurgeThread, HoldsASegmentAJoinerEmptiedForTheNextThread) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS means nothing under a sanitizer's allocator";
  start_purge_thread_now();
  const size_t before = rss_bytes();
  constexpr size_t kBuffer = 256 * hs_test::kKiB;
  constexpr int kBuffers = 32;
  // Buffers made and freed, and one small block left for the joiner to free.
  const auto work_leaving_one_block = [] {
    void* left = hs_malloc(100);
    std::vector<void*> buffers;
    for (int i = 0; i < kBuffers; ++i) {
      buffers.push_back(hs_malloc(kBuffer));
      if (buffers.back() == nullptr) std::abort();
      std::memset(buffers.back(), 0x5a, kBuffer);
    }
    for (void* p : buffers) hs_free(p);
    return left;
  };
  void* left = nullptr;
  std::thread([&] { left = work_leaving_one_block(); }).join();
  hs_free(left);  // empties the exited thread's segment
  const size_t held = rss_bytes();
  long faults = -1;
  std::thread([&] {
    const long start = hs_test::minor_faults();
    left = work_leaving_one_block();
    faults = hs_test::minor_faults() - start;
  }).join();
  hs_free(left);
  const long pages = static_cast<long>(kBuffers * kBuffer / 4096);
  EXPECT_GE(held, before + 6 * kMiB) << "the emptied segment was not held";
  EXPECT_LE(faults, pages / 8) << faults << " minor page faults writing " << pages
                               << " pages the thread before had left resident";
  const size_t lowest = lowest_rss_while_idle(3000, before + 4 * kMiB);
  EXPECT_LE(lowest, before + 4 * kMiB) << "RSS " << before / kMiB << " MiB before, " << held / kMiB
                                       << " held, " << lowest / kMiB << " at best after 3 s idle";
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
