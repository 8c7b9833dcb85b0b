// Soak: minutes of random multi-threaded traffic while the profiler starts, stops and dumps and
// worker threads exit and are replaced. After a warm-up the RSS must stay flat (no slow leak of
// pages, segments, thread heaps or profiler records), every block's content must survive until
// its free (on its own or another thread), and when the work ends the live threads return to
// the main thread alone. HS_SOAK_SECONDS sets the length (default 600); CTest runs it under the
// `soak` label, outside the default run.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::check_pattern;
using hs_test::fill_pattern;
using hs_test::kKiB;
using hs_test::kMiB;
using hs_test::rss_bytes;
using hs_test::SplitMix64;
using hs_test::stats_now;
using Clock = std::chrono::steady_clock;

struct Block {
  void* p = nullptr;
  size_t size = 0;
  uint64_t seed = 0;
};

// Blocks handed between threads: a worker frees what another allocated.
class Exchange {
 public:
  void put(Block b) {
    std::lock_guard<std::mutex> lock(mu_);
    if (blocks_.size() < kCapacity) {
      blocks_.push_back(b);
      return;
    }
    std::swap(blocks_[b.seed % kCapacity], b);
    release(b);
  }
  bool take(Block* out) {
    std::lock_guard<std::mutex> lock(mu_);
    if (blocks_.empty()) return false;
    *out = blocks_.back();
    blocks_.pop_back();
    return true;
  }
  void drain() {
    Block b;
    while (take(&b)) release(b);
  }
  static void release(const Block& b) {
    if (b.p == nullptr) return;
    if (check_pattern(b.p, b.size, b.seed) != SIZE_MAX) g_bad_blocks.fetch_add(1);
    hs_free(b.p);
  }
  static std::atomic<uint64_t> g_bad_blocks;

 private:
  static constexpr size_t kCapacity = 4096;
  std::mutex mu_;
  std::vector<Block> blocks_;
};
std::atomic<uint64_t> Exchange::g_bad_blocks{0};

size_t draw_size(SplitMix64& rng) {
  uint64_t r = rng.between(0, 999);
  if (r < 800) return rng.between(8, 256);
  if (r < 970) return rng.between(257, 8 * kKiB);
  if (r < 998) return rng.between(8 * kKiB, 256 * kKiB);
  return rng.between(256 * kKiB, 4 * kMiB);
}

// One worker generation: a random lifetime of random traffic over its own slots, handing one
// free in eight to the exchange; everything it still holds goes to the exchange when it ends,
// so its exited heap's pages are freed into by other threads.
void worker(uint64_t seed, Exchange* exchange, std::atomic<bool>* stop) {
  SplitMix64 rng(seed);
  std::vector<Block> slots(1024);
  const auto until = Clock::now() + std::chrono::milliseconds(rng.between(100, 2000));
  while (!stop->load(std::memory_order_relaxed) && Clock::now() < until) {
    for (int op = 0; op < 256; ++op) {
      Block& slot = slots[rng.between(0, slots.size() - 1)];
      if (slot.p != nullptr) {
        uint64_t action = rng.between(0, 15);
        if (action < 2) {
          exchange->put(slot);
        } else if (action < 4) {
          size_t new_size = draw_size(rng);
          if (check_pattern(slot.p, slot.size, slot.seed) != SIZE_MAX) {
            Exchange::g_bad_blocks.fetch_add(1);
          }
          void* q = hs_realloc(slot.p, new_size);
          if (q == nullptr) std::abort();
          size_t kept = std::min(new_size, slot.size);
          // The kept prefix must have moved with the block; then the whole block is re-filled.
          if (kept > 64 && check_pattern(q, kept - 64, slot.seed) != SIZE_MAX) {
            Exchange::g_bad_blocks.fetch_add(1);
          }
          slot.p = q;
          slot.size = new_size;
          fill_pattern(q, new_size, slot.seed);
          continue;
        } else {
          Exchange::release(slot);
        }
        slot = Block{};
      } else {
        Block taken;
        if (rng.between(0, 7) == 0 && exchange->take(&taken)) {
          Exchange::release(taken);
        }
        slot.size = draw_size(rng);
        slot.seed = rng.next();
        slot.p = hs_malloc(slot.size);
        if (slot.p == nullptr) std::abort();
        fill_pattern(slot.p, slot.size, slot.seed);
      }
    }
  }
  for (Block& b : slots) {
    if (b.p != nullptr) exchange->put(b);
  }
}

bool count_bytes(void* arg, const void* /*data*/, size_t len) {
  *static_cast<size_t*>(arg) += len;
  return true;
}

// Starts and stops the profiler at random intervals and dumps it in every format.
void profiler_churn(uint64_t seed, std::atomic<bool>* stop, std::atomic<uint64_t>* dumps) {
  SplitMix64 rng(seed);
  while (!stop->load(std::memory_order_relaxed)) {
    if (!hs_prof_start(static_cast<size_t>(rng.between(4 * kKiB, 512 * kKiB)))) {
      ADD_FAILURE() << "hs_prof_start refused while stopped";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(rng.between(10, 200)));
    size_t bytes = 0;
    int format = static_cast<int>(rng.between(0, 2));
    if (hs_prof_dump_format_writer(format, count_bytes, &bytes) && bytes > 0) dumps->fetch_add(1);
    hs_prof_stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(rng.between(0, 50)));
  }
}

int soak_seconds() {
  const char* s = std::getenv("HS_SOAK_SECONDS");
  int v = s != nullptr ? std::atoi(s) : 0;
  return v > 0 ? v : 600;
}

TEST(Soak, RandomTrafficWithThreadAndProfilerChurnKeepsMemoryFlat) {
  constexpr int kWorkers = 4;
  const int seconds = soak_seconds();
  const auto start = Clock::now();
  const auto end = start + std::chrono::seconds(seconds);
  // Warm-up: the first fifth, at least 5 s; its peak RSS is the reference.
  const auto warm = start + std::chrono::seconds(std::max(5, seconds / 5));

  Exchange exchange;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> dumps{0};
  std::thread profiler(profiler_churn, 0x50a4ULL, &stop, &dumps);
  std::vector<std::thread> workers;
  uint64_t generation = 0;
  for (int i = 0; i < kWorkers; ++i) {
    workers.emplace_back(worker, 0x5eedULL + generation++, &exchange, &stop);
  }

  size_t warm_peak = 0;
  size_t later_peak = 0;
  while (Clock::now() < end) {
    // Each generation lives 0.1-2 s: wait for it to end and start the next one in its place.
    for (auto& t : workers) {
      t.join();
      t = std::thread(worker, 0x5eedULL + generation++, &exchange, &stop);
      size_t& peak = Clock::now() < warm ? warm_peak : later_peak;
      peak = std::max(peak, rss_bytes());
    }
  }
  stop = true;
  for (auto& t : workers) t.join();
  profiler.join();
  exchange.drain();

  std::printf(
      "soak: %d s, %llu worker generations, %llu dumps, RSS peak %zu MiB in warm-up, "
      "%zu MiB after\n",
      seconds, static_cast<unsigned long long>(generation),
      static_cast<unsigned long long>(dumps.load()), warm_peak / kMiB, later_peak / kMiB);
  EXPECT_EQ(Exchange::g_bad_blocks.load(), 0u) << "blocks whose content changed before free";
  EXPECT_GT(generation, static_cast<uint64_t>(kWorkers)) << "threads did not come and go";
  EXPECT_GT(dumps.load(), 0u) << "the profiler never produced a dump";
  // Flat: the peak after warm-up stays within half again the warm-up's peak plus 32 MiB.
  EXPECT_LE(later_peak, warm_peak + warm_peak / 2 + 32 * kMiB);
  // Every worker's heap is gone: only the main thread keeps one.
  hs_collect(1);
  EXPECT_EQ(stats_now().threads, 1u);
}

}  // namespace
