// Large buffers of varying sizes: freed mappings are reused without faulting pages in again,
// and what the allocator keeps for reuse goes back to the OS once the churn stops. Counts page
// faults (getrusage minflt) and committed bytes, not time.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::kMiB;
using hs_test::minor_faults;

// 50 rounds of one buffer of 4..32 MiB, every page written, then freed.
size_t churn_buffers(uint64_t seed, size_t* touched_pages) {
  hs_test::SplitMix64 rng(seed);
  *touched_pages = 0;
  size_t largest = 0;
  for (int round = 0; round < 50; ++round) {
    const size_t n = rng.between(4 * kMiB, 32 * kMiB);
    char* p = static_cast<char*>(hs_malloc(n));
    if (p == nullptr) std::abort();
    for (size_t i = 0; i < n; i += 4096) p[i] = static_cast<char>(round);
    *touched_pages += n / 4096;
    if (n > largest) largest = n;
    hs_free(p);
  }
  return largest;
}

TEST(LargeReuse, VaryingBuffersDoNotFaultPagesInAgain) {
  if (hs_test::kSanitized) GTEST_SKIP() << "the sanitizer allocator replaces ours";
  // Reuse is what is tested, not the clock: a delay far longer than the loop keeps freed
  // memory cached however slow the machine is (the next test covers the expiry).
  size_t touched = 0;
  long faults = 0;
  size_t largest = 0;
  {
    const hs_test::ScopedPurgeDelays delays(60000, 60000);
    hs_collect(1);
    const long before = minor_faults();
    largest = churn_buffers(77, &touched);
    faults = minor_faults() - before;
  }
  hs_collect(1);
  std::printf("faults %ld for %zu pages touched (largest buffer %zu MiB)\n", faults, touched,
              largest / kMiB);
  // Faulting the largest buffer in once is unavoidable; a few times that is the bound (the
  // rest of the ~230k pages written must come from resident memory).
  EXPECT_LE(static_cast<size_t>(faults), 3 * largest / 4096) << "of " << touched << " pages";
}

// Blocks of 64 KiB to 1 MiB live on pages of whole slices in the segments, not in the huge
// cache: four of random sizes live at once, each replaced by the next and written whole. A
// smaller block placed on the slices a bigger one left must not give back what it does not
// cover, or the next bigger block faults it in again (up to one fault per page it writes).
TEST(LargeReuse, VaryingBlocksOnSlicesDoNotFaultPagesInAgain) {
  if (hs_test::kSanitized) GTEST_SKIP() << "the sanitizer allocator replaces ours";
  constexpr size_t kLive = 4;
  constexpr int kReplacements = 5000;
  constexpr size_t kLargest = 64 * 1024 + 1024 * 1024;
  size_t touched = 0;
  long faults = 0;
  {
    const hs_test::ScopedPurgeDelays delays(60000, 60000);  // reuse is tested, not the clock
    hs_collect(1);
    hs_test::SplitMix64 rng(91);
    std::vector<char*> live(kLive, nullptr);
    const long before = minor_faults();
    for (int i = 0; i < kReplacements; ++i) {
      char*& slot = live[static_cast<size_t>(i) % kLive];
      hs_free(slot);
      const size_t n = rng.between(64 * 1024, kLargest);
      slot = static_cast<char*>(hs_malloc(n));
      if (slot == nullptr) std::abort();
      for (size_t j = 0; j < n; j += 4096) slot[j] = static_cast<char>(i);
      touched += (n + 4095) / 4096;
    }
    faults = minor_faults() - before;
    for (char* p : live) hs_free(p);
  }
  hs_collect(1);
  std::printf("faults %ld for %zu pages touched\n", faults, touched);
  // The live blocks and the free runs between them fault in once: a few times what four of
  // the largest blocks cover (the loop writes ~700k pages).
  EXPECT_LE(static_cast<size_t>(faults), 3 * kLive * kLargest / 4096) << "of " << touched;
}

TEST(LargeReuse, CachedBuffersReturnToTheOsAfterTheChurnStops) {
  if (hs_test::kSanitized) GTEST_SKIP() << "the sanitizer allocator replaces ours";
  if (std::getenv("HEAPSCOPE_PURGE_DELAY") != nullptr) GTEST_SKIP() << "wants default delays";
  hs_collect(1);
  const uint64_t committed_before = hs_test::stats_now().committed_bytes;
  size_t touched = 0;
  churn_buffers(78, &touched);
  // Idle, apart from the small allocations a running program makes: they are what expires
  // the cache (there is no background thread).
  uint64_t committed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int j = 0; j < 32; ++j) hs_free(hs_malloc(200 * 1024));
    committed = hs_test::stats_now().committed_bytes;
    if (committed <= committed_before + 2 * kMiB) break;
  }
  EXPECT_LE(committed, committed_before + 2 * kMiB)
      << "freed large buffers still committed 3 s after the churn stopped";
}

}  // namespace

namespace {

// The drain: two threads build a live set of 200k mixed blocks (16 B..64 KiB, mostly small,
// every byte written), free it all and exit; the process then idles but for a running
// program's occasional allocations. What the allocator still holds must be small within a
// few purge delays.
TEST(Drain, ResidentMemoryFallsAfterAThreadedLiveSetIsFreed) {
  if (hs_test::kSanitized) GTEST_SKIP() << "RSS is meaningless under a sanitizer";
  if (std::getenv("HEAPSCOPE_PURGE_DELAY") != nullptr) GTEST_SKIP() << "wants default delays";
  hs_collect(1);
  const size_t rss_before = hs_test::rss_bytes();
  std::thread workers[2];
  for (int t = 0; t < 2; ++t) {
    workers[t] = std::thread([t] {
      hs_test::SplitMix64 rng(900 + static_cast<uint64_t>(t));
      std::vector<void*> blocks;
      blocks.reserve(100000);
      for (int i = 0; i < 100000; ++i) {
        const size_t n =
            rng.next() % 100 == 0 ? rng.between(1024, 64 * 1024) : rng.between(16, 1024);
        void* p = hs_malloc(n);
        if (p == nullptr) std::abort();
        std::memset(p, 7, n);
        blocks.push_back(p);
      }
      for (void* p : blocks) hs_free(p);
    });
  }
  for (auto& w : workers) w.join();
  size_t rss = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int j = 0; j < 8; ++j) hs_free(hs_malloc(200 * 1024));
    rss = hs_test::rss_bytes();
    if (rss <= rss_before + 4 * kMiB) break;
  }
  EXPECT_LE(rss, rss_before + 4 * kMiB) << "before " << rss_before / 1024 << " KiB";
}

}  // namespace
