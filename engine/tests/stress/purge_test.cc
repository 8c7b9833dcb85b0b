// Return to the OS: a ~256 MiB multi-threaded live set of small and medium blocks is freed, and
// RSS must fall by most of it within about a second, with default options (purge delay 10 ms).
// The only timing-dependent test in the suite; its bound (2 s, 75% returned) is generous.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::kKiB;
using hs_test::kMiB;
using hs_test::rss_bytes;

TEST(ReturnToOs, RssFallsAfterFreeingALargeLiveSet) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS is meaningless under a sanitizer";
  for (const char* var : {"HEAPSCOPE_PURGE_DELAY", "HEAPSCOPE_HUGE_CACHE_BYTES"}) {
    if (std::getenv(var) != nullptr) GTEST_SKIP() << var << " is set; this test wants defaults";
  }
  constexpr int kThreads = 4;
  constexpr size_t kPerThread = 64 * kMiB;
  const size_t rss_before = rss_bytes();
  std::vector<std::vector<void*>> blocks(kThreads);
  // Allocate on four threads (small and medium blocks, every page touched) ...
  {
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&blocks, t] {
        hs_test::SplitMix64 rng(500 + static_cast<uint64_t>(t));
        size_t bytes = 0;
        while (bytes < kPerThread) {
          const size_t n =
              rng.next() % 4 == 0 ? rng.range(1 * kKiB, 64 * kKiB) : rng.range(16, 1024);
          void* p = hs_malloc(n);
          if (p == nullptr) std::abort();
          std::memset(p, 0x42, n);
          blocks[static_cast<size_t>(t)].push_back(p);
          bytes += n;
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  const size_t rss_live = rss_bytes();
  const size_t grown = rss_live > rss_before ? rss_live - rss_before : 0;
  ASSERT_GE(grown, 200 * kMiB) << "the live set should be resident";
  // ... and free on four other threads, half of it cross-thread (blocks of thread t are freed by
  // thread t for even t, by thread t+2 for odd t: a permutation).
  {
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&blocks, t] {
        for (void* p : blocks[static_cast<size_t>(t % 2 == 0 ? t : (t + 2) % kThreads)]) hs_free(p);
      });
    }
    for (auto& th : threads) th.join();
  }
  // Within ~1 s (2 s allowed) resident memory is back within 25% of the live set. The main
  // thread keeps doing a little allocation meanwhile, as a running program would.
  const auto t0 = std::chrono::steady_clock::now();
  size_t rss_now = rss_bytes();
  double waited = 0;
  while (waited < 2.0) {
    rss_now = rss_bytes();
    if (rss_now <= rss_before + grown / 4) break;
    void* p = hs_malloc(100);
    hs_free(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const hs_stats_t s = hs_test::stats_now();
  EXPECT_LE(rss_now, rss_before + grown / 4)
      << "RSS before " << rss_before / kMiB << " MiB, live " << rss_live / kMiB << " MiB, after "
      << waited << " s still " << rss_now / kMiB << " MiB (committed " << s.committed_bytes / kMiB
      << " MiB, purged " << s.purged_bytes / kMiB << " MiB, abandoned segments "
      << s.abandoned_segments << ")";
  std::printf("RSS %zu -> %zu -> %zu MiB after %.3f s\n", rss_before / kMiB, rss_live / kMiB,
              rss_now / kMiB, waited);
}

}  // namespace
