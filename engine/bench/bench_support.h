// Small helpers shared by the allocator benchmark's rows and its RSS stress run.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "base/splitmix64.h"

namespace hs_bench {

// The project's one PRNG: a fixed seed gives every allocator the same size sequence
// (between(lo, hi): inclusive, unbiased).
using SplitMix64 = heapscope::base::SplitMix64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

inline void backoff(unsigned spins) {
  if (spins < 64) {
    cpu_relax();
  } else {
    std::this_thread::yield();
  }
}

// Bounded single-producer single-consumer ring of pointers. Capacity is a power of two.
template <size_t kCapacity>
class SpscRing {
  static_assert((kCapacity & (kCapacity - 1)) == 0, "capacity must be a power of two");

 public:
  bool try_push(void* p) {
    const size_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_cache_ == kCapacity) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (head - tail_cache_ == kCapacity) return false;
    }
    slots_[head & (kCapacity - 1)] = p;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  // Spins briefly, then yields: on an oversubscribed machine a pure spin burns the time slice
  // the other side needs.
  void push(void* p) {
    for (unsigned spins = 0; !try_push(p); ++spins) backoff(spins);
  }
  bool try_pop(void** out) {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_cache_) {
      head_cache_ = head_.load(std::memory_order_acquire);
      if (tail == head_cache_) return false;
    }
    *out = slots_[tail & (kCapacity - 1)];
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

 private:
  alignas(64) std::atomic<size_t> head_{0};
  size_t tail_cache_ = 0;  // producer's view of tail_
  alignas(64) std::atomic<size_t> tail_{0};
  size_t head_cache_ = 0;  // consumer's view of head_
  alignas(64) void* slots_[kCapacity] = {};
};

struct RssStressConfig {
  int threads = 2;
  size_t slots_per_thread = 20000;  // live-set capacity per thread
  size_t ops_per_thread = 2000000;
  uint64_t seed = 42;
};

// Runs the deterministic multi-threaded stress workload (growing, shrinking and regrowing live
// sets, cross-thread frees, content checks). Returns the number of content-check failures.
size_t run_rss_stress(const RssStressConfig& config);

// ---- program-shaped rows (program_rows.cc); each returns its content-check failures ---------
// `rounds` rounds of `threads` threads, each making objects_per_thread / 2 objects and freeing
// the leftovers of the other thread's previous round.
size_t rounds_run(int rounds, int threads, size_t objects_per_thread, uint64_t seed);
// `buffers` buffers of 4-32 MiB, every page written, each freed before the next.
size_t large_reuse_run(int buffers, uint64_t seed);

// A block of the program-shaped rows and the size it was made with (checked when freed).
struct SizedBlock {
  void* block = nullptr;
  size_t size = 0;
};

// Rounds of a pool of threads re-created for each batch of work (program_rows.cc): each round
// starts `threads` threads at once; each frees its share of the last round's leftovers, makes
// `blocks_per_thread` blocks (70% 16-256 B, 25% to 4 KiB, 4% to 64 KiB, 1% to 1 MiB), writes
// every byte of them, frees nine in ten and leaves the tenth for the next round.
class PoolRounds {
 public:
  PoolRounds(int threads, size_t blocks_per_thread, uint64_t seed);
  ~PoolRounds();
  PoolRounds(const PoolRounds&) = delete;
  PoolRounds& operator=(const PoolRounds&) = delete;
  size_t run_round();  // returns the content-check failures
  size_t release();    // frees the leftovers; returns the failures

 private:
  int threads_;
  size_t blocks_per_thread_;
  uint64_t seed_;
  uint64_t round_ = 0;
  std::vector<SizedBlock> left_;  // what the round's threads left for the next one
};

// The mixed live set's sizes: 78% 8-128 B, 20% 128 B-2 KiB, 2% 2-32 KiB, 1 in 2000 up to 1 MiB
// (hs-alloc-bench's mixed_live row and hs-ab-loop's mixed workload).
inline size_t mixed_size(SplitMix64& rng) {
  const uint64_t r = rng.below(2000);
  if (r == 0) return rng.between(32769, 1 << 20);
  if (r < 40) return rng.between(2049, 32768);
  if (r < 440) return rng.between(129, 2048);
  return rng.between(8, 128);
}

// A live set of mixed sizes (program_rows.cc), churned one replacement at a time.
class MixedLiveSet {
 public:
  MixedLiveSet(size_t blocks, uint64_t seed);
  ~MixedLiveSet();
  MixedLiveSet(const MixedLiveSet&) = delete;
  MixedLiveSet& operator=(const MixedLiveSet&) = delete;
  bool replace_one();  // false when the freed block failed its check
  size_t release();    // frees every block; returns the failures

 private:
  SplitMix64 rng_;
  std::vector<SizedBlock> slots_;
};

// One memory row in this process (rounds, large_reuse, mixed_live, pool, startup): prints one JSON
// line with the peak RSS, the RSS once the work has drained and after a second idle. Returns
// the exit status (2: unknown row).
int run_memory_row(const std::string& row, bool smoke);

// A "Vm...:" figure of /proc/self/status in KiB (VmRSS: resident now, VmHWM: its peak), 0 when
// absent. The peak is this address space's own: getrusage's ru_maxrss keeps the larger resident
// size of whatever process exec'ed this one (a Python driver's 16 MiB, say), and on Linux 6.2
// and later falls short of /proc's figure (per-CPU counters it does not sum).
size_t status_kib(const char* field);

}  // namespace hs_bench
