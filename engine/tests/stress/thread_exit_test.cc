// Threads the engine did not create, by the thousand, each allocating and exiting: the
// thread-exit hook (platform.h: a pthread key on Linux, an FLS callback on Windows) must tear
// every heap down and hand its segments on, so the heap count returns to where it was and the
// address space stays bounded instead of growing by a segment per exited thread (the leak
// that was the worst MinGW bug of allocators of this design). The positive control runs this
// test with HEAPSCOPE_TEST_NO_THREAD_EXIT_HOOK=1 (no hook) and expects it to fail.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::kMiB;
using hs_test::stats_now;

// One thread's work: small and medium blocks and one large one, most freed, some left for the
// main thread to free after the thread has gone (cross-thread frees into an exited heap).
void worker(void** leftover) {
  std::vector<void*> blocks;
  for (size_t i = 0; i < 64; ++i) {
    void* p = hs_malloc(16 + (i * 97) % 2000);
    ASSERT_NE(p, nullptr);
    static_cast<char*>(p)[0] = static_cast<char>(i);
    blocks.push_back(p);
  }
  void* large = hs_malloc(200 * 1024);
  ASSERT_NE(large, nullptr);
  static_cast<char*>(large)[200 * 1024 - 1] = 1;
  hs_free(large);
  *leftover = blocks.back();
  blocks.pop_back();
  for (void* p : blocks) hs_free(p);
}

TEST(ThreadExit, ThousandsOfThreadsReturnTheirHeapsAndSegments) {
  const size_t rounds = hs_test::scaled(500);
  constexpr size_t kPerRound = 4;
  const hs_stats_t before = stats_now();
  // A segment is 32 MiB: without the hook every exited thread keeps one, so after a few
  // rounds the reserve is far past this bound; with it the threads reuse a handful.
  const uint64_t reserve_bound = before.reserved_bytes + 16 * 32 * kMiB;
  for (size_t round = 0; round < rounds; ++round) {
    void* leftovers[kPerRound] = {};
    std::thread threads[kPerRound];
    for (size_t t = 0; t < kPerRound; ++t) threads[t] = std::thread(worker, &leftovers[t]);
    for (std::thread& thread : threads) thread.join();
    for (void* p : leftovers) hs_free(p);  // into the pages of threads that have exited
    const hs_stats_t now = stats_now();
    ASSERT_EQ(now.threads, before.threads) << "round " << round << ": exited threads still count";
    ASSERT_EQ(now.heaps, before.heaps) << "round " << round << ": exited threads' heaps remain";
    ASSERT_LE(now.reserved_bytes, reserve_bound)
        << "round " << round << ": address space grows with exited threads";
  }
  hs_collect(1);
  const hs_stats_t after = stats_now();
  EXPECT_EQ(after.threads, before.threads);
  EXPECT_EQ(after.alloc_count - before.alloc_count, after.free_count - before.free_count)
      << "every block the threads allocated was freed";
  std::printf("%zu threads: reserved %.1f MiB before, %.1f MiB after, %llu segments\n",
              rounds * kPerRound, static_cast<double>(before.reserved_bytes) / kMiB,
              static_cast<double>(after.reserved_bytes) / kMiB,
              static_cast<unsigned long long>(after.segments));
}

}  // namespace
