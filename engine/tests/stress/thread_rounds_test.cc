// Memory under thread churn: threads created in rounds hand blocks to each other and keep a
// fraction alive across rounds; producers exit while a consumer frees what they made. Peak
// RSS must stay within a fixed factor of the peak live bytes plus a constant, and fall back
// once the last round's blocks are freed: an exited thread's pages must be reused by the
// threads that follow and released when they empty, not kept and purged over and over.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#if !defined(_WIN32)
#include <sys/mman.h>      // mincore: which of a segment header's pages were ever touched
#include <sys/resource.h>  // getrusage: the page-reuse test counts minor faults (POSIX)
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "../support/takeover_scene.h"
#include "../support/test_support.h"

namespace {

using hs_test::kMiB;
using hs_test::rss_bytes;
using hs_test::scaled;
using hs_test::SplitMix64;
using hs_test::stats_now;

// Blocks carry their size in their first word so any thread can account for the bytes it
// frees; the live total and its peak are what the RSS bounds are measured against.
std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak_live{0};
std::atomic<size_t> g_peak_rss{0};

void note_rss() {
  size_t rss = rss_bytes();
  size_t seen = g_peak_rss.load(std::memory_order_relaxed);
  while (rss > seen && !g_peak_rss.compare_exchange_weak(seen, rss)) {
  }
}

void* block_new(size_t size) {
  auto* p = static_cast<uint64_t*>(hs_malloc(size));
  if (p == nullptr) std::abort();
  p[0] = size;
  p[size / sizeof(uint64_t) - 1] = ~uint64_t{size};
  int64_t live = g_live.fetch_add(static_cast<int64_t>(size)) + static_cast<int64_t>(size);
  int64_t peak = g_peak_live.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_live.compare_exchange_weak(peak, live)) {
  }
  return p;
}

// False if the block's size words were overwritten.
bool block_delete(void* block) {
  if (block == nullptr) return true;
  auto* p = static_cast<uint64_t*>(block);
  size_t size = p[0];
  bool ok = size >= 16 && p[size / sizeof(uint64_t) - 1] == ~uint64_t{size};
  g_live.fetch_sub(static_cast<int64_t>(size));
  hs_free(block);
  return ok;
}

// Exited threads' segments emptied by other threads' frees may stay, a bounded few, for the
// next thread that needs one; the purge deadline must still release every one of them.
// Allocator calls run the purges that are due, so this makes some while it waits.
size_t abandoned_after_the_deadline() {
  for (int i = 0; i < 200 && stats_now().abandoned_segments != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    hs_free(hs_malloc(100000));
  }
  return stats_now().abandoned_segments;
}

#if !defined(_WIN32)
long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}
#endif

void reset_counters() {
  g_live.store(0);
  g_peak_live.store(0);
  g_peak_rss.store(0);
}

// Mostly small sizes, a few medium and rare large ones (up to 512 KiB).
size_t pick_size(SplitMix64& rng, unsigned max_shift) {
  size_t size = size_t{16} << rng.below(max_shift);
  uint64_t roll = rng.below(1000);
  if (roll < 1) {
    size *= 1000;
  } else if (roll < 10) {
    size *= 100;
  }
  return size;
}

constexpr size_t kTransfers = 1000;
std::array<std::atomic<void*>, kTransfers> g_transfer;

// One round's share of work for one thread: allocates, frees a random earlier block, keeps
// some blocks to the end of the round and swaps others with the shared transfer array (so
// blocks outlive the thread that made them and are freed by another one).
int round_worker(uint64_t seed, size_t ops) {
  SplitMix64 rng(seed);
  std::vector<void*> data;
  std::vector<void*> kept;
  data.reserve(ops);
  kept.reserve(ops);
  int bad = 0;
  for (size_t i = 0; i < ops; ++i) {
    if (rng.below(4) == 0) {
      kept.push_back(block_new(pick_size(rng, 6)));
    } else {
      data.push_back(block_new(pick_size(rng, 4)));
    }
    if (rng.below(3) != 0 && !data.empty()) {
      size_t at = rng.below(data.size());
      if (!block_delete(data[at])) ++bad;
      data[at] = nullptr;
    }
    if (rng.below(4) == 0 && !data.empty()) {
      size_t at = rng.below(data.size());
      data[at] = g_transfer[rng.below(kTransfers)].exchange(data[at]);
    }
    if ((i & 2047) == 0) note_rss();
  }
  note_rss();
  for (void* p : kept) bad += block_delete(p) ? 0 : 1;
  for (void* p : data) bad += block_delete(p) ? 0 : 1;
  return bad;
}

TEST(ThreadRounds, PeakRssFollowsTheLiveSetAndFallsAfterTheLastRound) {
  const size_t rounds = std::max<size_t>(10, scaled(120));
  const size_t ops = 6000;
  hs_collect(1);
  reset_counters();
  const size_t rss_before = rss_bytes();
  std::atomic<int> bad{0};
  SplitMix64 main_rng(4242);
  for (size_t round = 0; round < rounds; ++round) {
    // Like a pool that spawns a fresh worker per task: one new thread per round, next to the
    // main thread, which works too and outlives them all.
    std::thread worker([&bad, round] { bad += round_worker(2 * round + 1, 2 * ops); });
    bad += round_worker(2 * round + 2, ops);
    worker.join();
    // Half the transfers survive into the next round, all of them after the last one.
    for (auto& slot : g_transfer) {
      if (main_rng.below(2) == 0 || round + 1 == rounds)
        bad += block_delete(slot.exchange(nullptr)) ? 0 : 1;
    }
    note_rss();
  }
  EXPECT_EQ(bad.load(), 0) << "blocks were overwritten";
  EXPECT_EQ(g_live.load(), 0);
  if (hs_test::kSanitized) return;  // RSS means nothing under a sanitizer's allocator
  const size_t peak_live = static_cast<size_t>(g_peak_live.load());
  const size_t peak_growth = g_peak_rss.load() > rss_before ? g_peak_rss.load() - rss_before : 0;
  // The factor covers size-class rounding, partly used pages and the purge delay's resident
  // free pages; the constant covers metadata, thread stacks and the test's own vectors.
  EXPECT_LE(peak_growth, 3 * peak_live + 24 * kMiB)
      << "peak RSS grew " << peak_growth / kMiB << " MiB for a peak live set of "
      << peak_live / kMiB << " MiB over " << rounds << " rounds";
  // Everything is freed: after the purge delay resident memory is back near where it began.
  size_t rss_after = rss_bytes();
  for (int i = 0; i < 100 && rss_after > rss_before + 8 * kMiB; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    hs_free(hs_malloc(100000));  // a slow-path call runs the purges that are due
    rss_after = rss_bytes();
  }
  EXPECT_LE(rss_after, rss_before + 8 * kMiB)
      << "RSS " << rss_before / kMiB << " MiB before, " << rss_after / kMiB << " MiB after";
  EXPECT_EQ(abandoned_after_the_deadline(), 0u)
      << "emptied segments of exited threads were kept past the purge deadline";
}

// Producers allocate and exit; the main thread, which allocates nothing itself, frees most of
// their blocks at once and keeps a tenth until the next round. The exited producers' memory
// must come back although the only thread freeing into it never allocates.
TEST(ThreadRounds, ProducersExitWhileAConsumerFrees) {
  const size_t rounds = std::max<size_t>(6, scaled(40));
  constexpr int kProducers = 2;
  constexpr size_t kBlocksPerProducer = 6000;  // ~3 MiB each
  hs_collect(1);
  reset_counters();
  const size_t rss_before = rss_bytes();
  std::vector<void*> kept;
  std::vector<std::vector<void*>> made(kProducers);
  for (auto& v : made) v.reserve(kBlocksPerProducer);
  kept.reserve(kProducers * kBlocksPerProducer);
  int bad = 0;
  for (size_t round = 0; round < rounds; ++round) {
    std::vector<std::thread> producers;
    for (int t = 0; t < kProducers; ++t) {
      producers.emplace_back([&made, t, round] {
        SplitMix64 rng(round * 100 + static_cast<uint64_t>(t));
        for (size_t i = 0; i < kBlocksPerProducer; ++i) {
          made[t].push_back(block_new(16 * (1 + rng.below(64))));
        }
      });
    }
    for (auto& th : producers) th.join();
    note_rss();
    for (void* p : kept) bad += block_delete(p) ? 0 : 1;
    kept.clear();
    for (auto& v : made) {
      for (size_t i = 0; i < v.size(); ++i) {
        if (i % 10 == 0) {
          kept.push_back(v[i]);
        } else {
          bad += block_delete(v[i]) ? 0 : 1;
        }
      }
      v.clear();
    }
    note_rss();
  }
  for (void* p : kept) bad += block_delete(p) ? 0 : 1;
  EXPECT_EQ(bad, 0) << "blocks were overwritten";
  EXPECT_EQ(g_live.load(), 0);
  EXPECT_EQ(abandoned_after_the_deadline(), 0u)
      << "segments of exited producers stayed abandoned after all their blocks were freed";
  if (hs_test::kSanitized) return;
  const size_t peak_live = static_cast<size_t>(g_peak_live.load());
  const size_t peak_growth = g_peak_rss.load() > rss_before ? g_peak_rss.load() - rss_before : 0;
  EXPECT_LE(peak_growth, 3 * peak_live + 16 * kMiB)
      << "peak RSS grew " << peak_growth / kMiB << " MiB for a peak live set of "
      << peak_live / kMiB << " MiB over " << rounds << " rounds";
  // No waiting and no allocation: the consumer's frees alone must have returned the memory.
  const size_t rss_after = rss_bytes();
  EXPECT_LE(rss_after, rss_before + 8 * kMiB)
      << "RSS " << rss_before / kMiB << " MiB before, " << rss_after / kMiB << " MiB after";
}

// A new thread that takes over an exited thread's emptied segment puts its page of a class
// where that class's page was: the slice is resident as far as that class carved it, no
// further (a 16-byte class on a slice a 1 KiB class carved whole would keep 60 KiB resident
// for nothing; a 1 KiB class on a slice the 16-byte class barely touched faults it in).
TEST(ThreadRounds, ANewThreadsPageOfAClassTakesTheSliceThatClassLeft) {
  hs_collect(1);  // nothing abandoned: the next thread takes the one segment made below
  const auto slice_of = [](const void* p) { return reinterpret_cast<uintptr_t>(p) >> 16; };
  uintptr_t big_slice = 0;
  uintptr_t small_slice = 0;
  std::thread([&] {
    void* big = hs_malloc(1000);  // first, so its page takes the lower slice
    void* small = hs_malloc(16);
    big_slice = slice_of(big);
    small_slice = slice_of(small);
    hs_free(big);
    hs_free(small);
  }).join();
  ASSERT_NE(big_slice, small_slice);
  uintptr_t again = 0;
  std::thread([&] {
    void* small = hs_malloc(16);
    again = slice_of(small);
    hs_free(small);
  }).join();
  EXPECT_EQ(again, small_slice) << "the 16-byte page went to slice " << std::hex << again
                                << " (the 1000-byte class's was " << big_slice << ")";
}

// A class whose own freed slice another class took starts its next page on the free resident
// slice that best fits what its last page carved, not on the lowest one: the lowest here is a
// slice a class of 1000-byte blocks made fully resident, which a 16-byte page would hold
// resident for a few blocks while the big class's next page faulted a fresh slice in.
TEST(ThreadRounds, APageStartsOnTheResidentSliceThatFitsWhatItsClassCarved) {
  hs_collect(1);  // nothing abandoned: the next thread takes the one segment made below
  const auto slice_of = [](const void* p) { return reinterpret_cast<uintptr_t>(p) >> 16; };
  uintptr_t tiny_slice = 0;   // 16-byte class, one OS page carved
  uintptr_t full_slice = 0;   // 1000-byte class, all 64 KiB carved
  uintptr_t other_slice = 0;  // 32-byte class, one OS page carved
  std::thread([&] {
    void* tiny = hs_malloc(16);
    std::vector<void*> big;
    for (int i = 0; i < 64; ++i) big.push_back(hs_malloc(1000));
    void* other = hs_malloc(32);
    tiny_slice = slice_of(tiny);
    full_slice = slice_of(big.back());
    other_slice = slice_of(other);
    for (void* p : big) hs_free(p);
    hs_free(tiny);
    hs_free(other);
  }).join();
  ASSERT_LT(tiny_slice, full_slice);
  ASSERT_LT(full_slice, other_slice);
  uintptr_t taker = 0;
  uintptr_t again = 0;
  std::thread([&] {
    void* first = hs_malloc(48);  // a class with no record takes the lowest: the 16-byte slice
    void* small = hs_malloc(16);
    taker = slice_of(first);
    again = slice_of(small);
    hs_free(first);
    hs_free(small);
  }).join();
  ASSERT_EQ(taker, tiny_slice) << "the setup expects the lowest free slice to be taken first";
  EXPECT_EQ(again, other_slice) << "the 16-byte page went to slice " << std::hex << again
                                << " (the fully resident one is " << full_slice << ")";
}

#if !defined(_WIN32)
// Threads in rounds (mstress's pattern): each new thread first frees what the exited one
// before it left, then allocates about as much again. It must reuse the pages its predecessor
// touched (an emptied segment of an exited thread is kept for it) rather than fault fresh ones in:
// the cost of faulting ~200 pages per round made this pattern 10x slower than under tcmalloc. Minor
// faults are counted by the kernel, so this is a count, not a timing.
TEST(ThreadRounds, FollowingThreadsReuseTheirPredecessorsPages) {
  if (hs_test::kSanitized) GTEST_SKIP() << "shadow memory faults in with every page touched";
  constexpr size_t kObjects = 2000;
  constexpr int kRounds = 60;
  constexpr int kWarmRounds = 10;
  std::vector<void*> handed(kObjects, nullptr);
  long faults_at_warm = 0;
  for (int round = 0; round < kRounds; ++round) {
    if (round == kWarmRounds) faults_at_warm = minor_faults();
    std::thread worker([&handed, round] {
      SplitMix64 rng(static_cast<uint64_t>(round) + 77);
      // First the predecessor's leftovers (its segment empties while abandoned), then the
      // thread's own work.
      for (void*& p : handed) {
        hs_free(p);
        p = nullptr;
      }
      for (void*& p : handed) {
        size_t size = rng.below(64) == 0 ? 1025 + rng.below(15360) : 8 + rng.below(1017);
        p = hs_malloc(size);
        std::memset(p, 1, size);
        if (rng.below(4) != 0) {  // most die young; a quarter outlive the thread
          hs_free(p);
          p = nullptr;
        }
      }
    });
    worker.join();
  }
  for (void*& p : handed) hs_free(p);
  const long per_round = (minor_faults() - faults_at_warm) / (kRounds - kWarmRounds);
  // A new thread's stack and its first touches of the heap's metadata take a few faults.
  EXPECT_LE(per_round, 40) << per_round << " minor page faults per round of a new thread";
}

// The same with the predecessor's blocks spread thinly over many size classes: a page per
// class, each holding a block or two, so its emptied segment has most of a hundred slices
// with a few KiB resident in each. What the segment keeps for the next thread is bounded by
// its resident bytes, not by a count of slices; kept by count (the lowest 32 slices), the
// rest was purged at every round and faulted in again (~70 faults a round).
TEST(ThreadRounds, FollowingThreadsReuseManyThinlyUsedPages) {
  if (hs_test::kSanitized) GTEST_SKIP() << "shadow memory faults in with every page touched";
  std::vector<size_t> sizes;  // about one size per class from 16 B to 48 KiB
  for (double size = 16; size <= 48 * 1024; size *= 1.06)
    sizes.push_back(static_cast<size_t>(size));
  constexpr int kRounds = 60;
  constexpr int kWarmRounds = 10;
  std::vector<void*> handed(sizes.size(), nullptr);
  long faults_at_warm = 0;
  for (int round = 0; round < kRounds; ++round) {
    if (round == kWarmRounds) faults_at_warm = minor_faults();
    std::thread worker([&handed, &sizes] {
      for (void*& p : handed) {
        hs_free(p);
        p = nullptr;
      }
      for (size_t i = 0; i < sizes.size(); ++i) {
        void* dies = hs_malloc(sizes[i]);
        handed[i] = hs_malloc(sizes[i]);
        std::memset(dies, 1, sizes[i]);
        std::memset(handed[i], 2, sizes[i]);
        hs_free(dies);
      }
    });
    worker.join();
  }
  for (void*& p : handed) hs_free(p);
  const long per_round = (minor_faults() - faults_at_warm) / (kRounds - kWarmRounds);
  EXPECT_LE(per_round, 20) << per_round << " minor page faults per round of a new thread ("
                           << sizes.size() << " sizes)";
}

// Minor page faults per round (the fewest of `chunks` chunks of `rounds_per_chunk` rounds,
// after `warm_rounds`) of rounds of two new threads that each make `blocks` blocks of sizes
// from `pick` and keep one in `keep_one_in` (freeing the others at once), the kept ones freed
// by this thread once both have exited. (The noise of a shared machine, another process's
// memory pressure on the code pages, only ever adds faults.)
template <typename Pick>
long faults_per_round_of_two_threads(int warm_rounds, int chunks, int rounds_per_chunk,
                                     size_t blocks, uint64_t keep_one_in, Pick pick) {
  long per_round = -1;
  long chunk_start = 0;
  for (int round = 0; round < warm_rounds + chunks * rounds_per_chunk; ++round) {
    if (round >= warm_rounds && (round - warm_rounds) % rounds_per_chunk == 0) {
      const long now = minor_faults();
      if (round > warm_rounds) {
        const long chunk = (now - chunk_start) / rounds_per_chunk;
        per_round = per_round < 0 || chunk < per_round ? chunk : per_round;
      }
      chunk_start = now;
    }
    std::vector<void*> made[2];
    std::thread workers[2];
    for (int t = 0; t < 2; ++t) {
      workers[t] = std::thread([&made, &pick, t, round, blocks, keep_one_in] {
        SplitMix64 rng(static_cast<uint64_t>(round * 2 + t));
        made[t].reserve(blocks);
        for (size_t i = 0; i < blocks; ++i) {
          const size_t size = pick(rng);
          void* p = hs_malloc(size);
          if (p == nullptr) std::abort();
          std::memset(p, t + 1, size);
          if (rng.below(keep_one_in) == 0) {
            made[t].push_back(p);
          } else {
            hs_free(p);
          }
        }
      });
    }
    for (std::thread& w : workers) w.join();
    for (auto& made_by_one : made) {
      for (void* p : made_by_one) hs_free(p);
    }
  }
  const long last = (minor_faults() - chunk_start) / rounds_per_chunk;
  return last < per_round ? last : per_round;
}

// Rounds of two threads at once whose blocks all die before the next round (the pattern of
// hs-alloc-bench's rounds/2x2000): each round leaves two emptied segments. Both must wait for
// the next round's two threads; with one kept, the second thread of every round mapped a
// fresh segment and faulted its pages in again (~60 faults a round, against ~10).
TEST(ThreadRounds, TwoThreadsPerRoundBothReuseTheirPredecessorsSegments) {
  if (hs_test::kSanitized) GTEST_SKIP() << "shadow memory faults in with every page touched";
  // ~0.5 MiB a thread: both fit the kept budget.
  const long per_round = faults_per_round_of_two_threads(10, 7, 10, 1000, 1, [](SplitMix64& rng) {
    return static_cast<size_t>(rng.between(8, 1024));
  });
  std::printf("minor page faults per round of two new threads: %ld\n", per_round);
  // Two new threads' stacks and first touches of their heaps' metadata take a few faults.
  EXPECT_LE(per_round, 40) << per_round << " minor page faults per round of two new threads";
}

// The same rounds as hs-alloc-bench's rounds/2x2000 makes them (a block in 64 of 1-16 KiB,
// the rest 8 B to 1 KiB, a quarter kept), over hundreds of rounds. Which slices a round's pages
// take varies, and what a slice keeps resident is the most any page carved there since it was last
// purged, so the emptied segments' resident bytes creep up round after round to about twice what
// one round uses (1.0-1.2 MiB a segment here). Once they outgrew the budget of what kept segments
// may keep resident (2 MiB then), every round purged the highest of them and the next faulted them
// in again: 5-11 faults a round, rounds/2x2000 at 1.5x glibc's time.
TEST(ThreadRounds, ResidentCreepOfVaryingRoundsStaysWithinTheKeptBudget) {
  if (hs_test::kSanitized) GTEST_SKIP() << "shadow memory faults in with every page touched";
  const long per_round = faults_per_round_of_two_threads(200, 5, 40, 1000, 4, [](SplitMix64& rng) {
    return static_cast<size_t>(rng.below(64) == 0 ? rng.between(1025, 16384)
                                                  : rng.between(8, 1024));
  });
  std::printf("minor page faults per round of two new threads, mixed sizes: %ld\n", per_round);
  EXPECT_LE(per_round, 3) << per_round << " minor page faults per round of two new threads";
}
#endif  // !_WIN32

#if defined(__linux__)
// Pages of [begin, begin + bytes) that are mapped in (by a write, or by a read: a read of an
// untouched anonymous page maps one too, the kernel's shared zero page where it has one and a
// fresh page where it has not, as on some VM kernels).
size_t touched_pages(uintptr_t begin, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  if (mincore(reinterpret_cast<void*>(begin), bytes, in_core.data()) != 0) return SIZE_MAX;
  return static_cast<size_t>(
      std::count_if(in_core.begin(), in_core.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

// A segment's header holds a 128-byte descriptor for each of its 512 slices (64 KiB). When a
// thread exits, and when another adopts its segment, only the descriptors of pages in use may
// be visited: reading all of them faulted in the whole 64 KiB per segment of every exited
// thread (as real memory, where the kernel has no shared zero page).
TEST(ThreadRounds, AbandonAndAdoptTouchOnlyTheDescriptorsInUse) {
  if (hs_test::under_emulator()) GTEST_SKIP() << "mincore reports the emulator's view";
  hs_collect(1);  // nothing abandoned: the second thread adopts the segment made below
  constexpr uintptr_t kSegmentBytes = uintptr_t{32} << 20;
  constexpr size_t kHeaderBytes = size_t{128} << 10;
  void* kept = nullptr;
  std::thread([&kept] { kept = hs_malloc(16); }).join();  // a live block: the segment stays
  const uintptr_t segment = reinterpret_cast<uintptr_t>(kept) & ~(kSegmentBytes - 1);
  const size_t after_abandon = touched_pages(segment, kHeaderBytes);
  void* second = nullptr;
  std::thread([&second] { second = hs_malloc(16); }).join();  // adopts it, then abandons it
  const bool adopted = (reinterpret_cast<uintptr_t>(second) & ~(kSegmentBytes - 1)) == segment;
  const size_t after_adopt = touched_pages(segment, kHeaderBytes);
  hs_free(second);
  hs_free(kept);
  ASSERT_TRUE(adopted) << "the second thread did not take over the first one's segment";
  // The header's fields and the descriptors of the pages in use: a few pages, not 17.
  EXPECT_LE(after_abandon, 3u) << "header pages touched after the thread exited";
  EXPECT_LE(after_adopt, 3u) << "header pages touched after a thread adopted the segment";
}
#endif  // __linux__

}  // namespace

namespace {

using hs_test::run_takeover_scene;
using hs_test::segment_of;
using hs_test::TakeoverScene;

// Of the exited threads' segments, a thread that needs one takes the one holding the most
// resident free memory, not the one abandoned last. Here the last is a thread's that made one
// small block; before it, a thread's that made and freed 16 MiB of 256 KiB buffers. Taking
// the last (as the list's head once was) left the big one's free memory to the purge
// deadline while the new thread faulted in fresh slices for the same work.
TEST(ThreadRounds, ANewThreadAdoptsTheAbandonedSegmentWithTheMostResidentFreeMemory) {
  hs_test::ScopedPurgeDelays never(-1, -1);  // nothing purged while the test reads residency
  hs_collect(1);  // nothing abandoned: the two segments made below are the only ones
  void* kept_big = nullptr;
  void* kept_small = nullptr;
  std::atomic<bool> small_made{false};
  std::atomic<bool> big_exited{false};
  // The small one allocates while the big one lives (so it maps a segment of its own rather
  // than adopting the big one's) and exits after it (so its segment is abandoned last).
  std::thread big([&] {
    std::vector<void*> buffers;
    for (int i = 0; i < 64; ++i) {
      buffers.push_back(hs_malloc(256 * 1024));
      std::memset(buffers.back(), 1, 256 * 1024);
    }
    kept_big = buffers[0];  // keeps the segment from emptying: it is abandoned as it is
    for (size_t i = 1; i < buffers.size(); ++i) hs_free(buffers[i]);
    while (!small_made.load()) std::this_thread::yield();
  });
  std::thread small([&] {
    kept_small = hs_malloc(100);
    small_made.store(true);
    while (!big_exited.load()) std::this_thread::yield();
  });
  big.join();
  big_exited.store(true);
  small.join();
  ASSERT_NE(segment_of(kept_big), segment_of(kept_small));
  void* taken = nullptr;
  std::thread([&] {
    taken = hs_malloc(256 * 1024);
    hs_free(taken);
  }).join();
  EXPECT_EQ(segment_of(taken), segment_of(kept_big))
      << "the new thread's buffer went to the segment of the thread that made one small block";
  hs_free(kept_big);
  hs_free(kept_small);
}

#if !defined(_WIN32)
// Rounds of several threads started together (a pool re-created for each batch of work): each
// frees its share of what the last round left, makes a few MiB of mixed blocks and keeps a
// tenth for the next round. The new threads must take the segments that still hold the last
// round's free memory. Taking the most recently abandoned ones instead, the pool's threads
// faulted in 184-780 pages in the lower-quartile round here against 8-45 (release and debug,
// beside up to two other copies; a round writes ~24,000 pages and the bound is a 256th of
// that); at 8 threads of 22 MB a round, 3.5x the time (docs/allocator.md, "Which abandoned
// segment a thread adopts"). How the threads of a round interleave on few cores moves single
// rounds by hundreds of faults, most of all on a loaded machine (the median round of a Debug
// build beside four other copies: 25-570), so the test reads the lower quartile of many
// rounds, and runs with no other test beside it (CMakeLists.txt, SERIAL).
TEST(ThreadRounds, RoundsOfThreadPoolsReuseTheResidentSegments) {
  if (hs_test::kSanitized) GTEST_SKIP() << "shadow memory faults in with every page touched";
  // Slow rounds (a loaded machine) must not reach the purge deadlines: what is measured is
  // which memory the new threads take, not how long it stays.
  hs_test::ScopedPurgeDelays long_delays(1000, 10000);
  constexpr int kThreads = 8;
  constexpr int kRounds = 120;
  constexpr int kWarmRounds = 6;
  constexpr size_t kBlocks = 1500;
  std::vector<void*> left;  // the last round's tenth
  std::mutex left_lock;
  std::vector<long> faults;  // per round after the warm ones
  size_t bytes_per_round = 0;
  for (int round = 0; round < kRounds; ++round) {
    const long faults_before = minor_faults();
    std::vector<void*> previous;
    previous.swap(left);
    std::atomic<size_t> bytes{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t) {
      pool.emplace_back([&, t] {
        SplitMix64 rng(static_cast<uint64_t>(round * kThreads + t) + 991);
        for (size_t i = static_cast<size_t>(t); i < previous.size(); i += kThreads) {
          hs_free(previous[i]);
        }
        std::vector<void*> mine;
        size_t made = 0;
        for (size_t i = 0; i < kBlocks; ++i) {
          const uint64_t roll = rng.below(100);
          const size_t size = roll < 70   ? rng.between(16, 256)
                              : roll < 95 ? rng.between(256, 4096)
                              : roll < 99 ? rng.between(4096, 65536)
                                          : rng.between(65536, 1024 * 1024);
          void* p = hs_malloc(size);
          std::memset(p, 1, size);
          made += size;
          mine.push_back(p);
        }
        bytes += made;
        std::vector<void*> keep;
        for (size_t i = 0; i < mine.size(); ++i) {
          if (i % 10 == 0) {
            keep.push_back(mine[i]);
          } else {
            hs_free(mine[i]);
          }
        }
        std::lock_guard<std::mutex> hold(left_lock);
        left.insert(left.end(), keep.begin(), keep.end());
      });
    }
    for (std::thread& worker : pool) worker.join();
    bytes_per_round = bytes.load();
    if (round >= kWarmRounds) faults.push_back(minor_faults() - faults_before);
  }
  for (void* p : left) hs_free(p);
  std::sort(faults.begin(), faults.end());
  const long lower_quartile = faults[faults.size() / 4];
  const long pages_per_round = static_cast<long>(bytes_per_round / 4096);
  std::printf(
      "minor page faults in the lower-quartile round: %ld, the median %ld (a round writes "
      "%ld pages)\n",
      lower_quartile, faults[faults.size() / 2], pages_per_round);
  EXPECT_LE(lower_quartile, pages_per_round / 256)
      << lower_quartile << " minor page faults in the lower-quartile round of " << kThreads
      << " new threads writing " << pages_per_round << " pages";
}

// A thread whose own segment has no resident room for a large buffer takes over the segment a
// thread created before it left on exit with megabytes free and resident, rather than fault
// fresh pages in: in a pool of threads started together, the first to finish leave their
// memory to those still working. Without it the later thread here faulted in every page of
// its buffers (3,072) while the earlier one's 12 MiB sat on the abandoned list.
TEST(ThreadRounds, ARunningThreadTakesTheResidentMemoryAnEarlierThreadLeft) {
  if (hs_test::kSanitized) GTEST_SKIP() << "shadow memory faults in with every page touched";
  hs_test::ScopedPurgeDelays long_delays(1000, 10000);  // a slow machine must not purge it
  hs_collect(1);  // nothing abandoned: the earlier thread's segment is the only one
  constexpr size_t kBuffer = 256 * 1024;
  constexpr int kBuffers = 48;
  const auto make_and_free_buffers = [] {
    std::vector<void*> buffers;
    for (int i = 0; i < kBuffers; ++i) {
      buffers.push_back(hs_malloc(kBuffer));
      std::memset(buffers.back(), 1, kBuffer);
    }
    for (void* p : buffers) hs_free(p);
  };
  // 1: the earlier thread has allocated; 2: the later one has a segment; 3: the earlier exited.
  std::atomic<int> stage{0};
  void* kept = nullptr;
  std::thread earlier([&] {
    kept = hs_malloc(100);  // keeps its segment from emptying: it is abandoned as it is
    stage.store(1);
    while (stage.load() < 2) std::this_thread::yield();
    make_and_free_buffers();
  });
  while (stage.load() < 1) std::this_thread::yield();
  long faults = -1;
  std::thread later([&] {
    void* own = hs_malloc(100);  // a segment of its own before the earlier thread exits
    stage.store(2);
    while (stage.load() < 3) std::this_thread::yield();
    const long before = minor_faults();
    make_and_free_buffers();
    faults = minor_faults() - before;
    hs_free(own);
  });
  earlier.join();
  stage.store(3);
  later.join();
  hs_free(kept);
  const long pages = static_cast<long>(kBuffers * kBuffer / 4096);
  EXPECT_LE(faults, pages / 8) << faults << " minor page faults writing " << pages
                               << " pages of buffers an exited thread had left resident";
}

// Not the other way round: a thread created before the one that exited (a main thread that
// starts a worker per round and works beside it, as in mimalloc-bench's mstress) leaves the
// exited thread's segment to the next new thread, which adopts one at its first allocation.
// Taken by the older thread, the next worker mapped a fresh segment and faulted it in
// (mstress peaked at 18 MiB in half its runs against 12.5).
TEST(ThreadRounds, AnOlderThreadLeavesAnExitedThreadsSegmentToTheNextNewOne) {
  uintptr_t next_thread_buffer = 0;
  // No gap needed: this binary has no pthread_create wrapper, so none of its threads is in a
  // batch (threads the wrapper starts together are: override/thread_batch_test.cc).
  const TakeoverScene scene = run_takeover_scene(std::chrono::milliseconds(0), [&] {
    std::thread([&] {
      void* next = hs_malloc(256 * 1024);
      next_thread_buffer = segment_of(next);
      hs_free(next);
    }).join();
  });
  for (uintptr_t buffer : scene.first_thread_buffers) {
    EXPECT_NE(buffer, scene.exited_segment) << "the older thread took the exited one's segment";
  }
  EXPECT_EQ(next_thread_buffer, scene.exited_segment)
      << "the next new thread's buffer did not go to the exited thread's segment";
}

#endif

// Threads that each allocate one small block, swap it into a shared table (freeing the block
// they take out) and exit (mimalloc-bench's mleak). The live set is the table, 1000 blocks of
// 128 B: they must share pages, not pin a page (a slice) per exited thread each.
TEST(ThreadRounds, ShortThreadsLeavingOneBlockShareTheirPages) {
  constexpr size_t kTable = 1000;
  const size_t threads = scaled(2000);  // a live block per thread until the table is full
  std::vector<std::atomic<void*>> table(kTable);
  for (size_t t = 0; t < threads; ++t) {
    std::thread worker([&table, t] {
      void* p = hs_calloc(16, sizeof(void*));
      size_t slot = t * 7919 % kTable;
      hs_free(table[slot].exchange(p));
    });
    worker.join();
  }
  const size_t pages = stats_now().pages;
  for (auto& slot : table) hs_free(slot.exchange(nullptr));
  // Up to 1000 blocks of 128 B fit in 2 pages; allow for the main thread's and a few partial
  // ones (a page per exited thread is hundreds).
  EXPECT_LE(pages, 24u) << pages << " pages in use for " << std::min(threads, kTable)
                        << " live blocks of 128 B";
}

}  // namespace
