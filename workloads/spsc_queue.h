// Bounded single-producer/single-consumer ring of block pointers: the only shared
// state a cross-thread workload touches in the timed loop. Lock-free: one acquire load
// of the other side's index when the cached copy says full/empty, one release store.
// Head (consumer) and tail (producer) sit on separate cache lines with their cached
// copies of the other index, so the steady state causes no false sharing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "workloads/mmap_region.h"

namespace heapscope::workloads {

class SpscRing {
 public:
  void init(void** buffer, std::uint32_t capacity_pow2) {
    buf_ = buffer;
    mask_ = capacity_pow2 - 1;
  }

  bool push(void* p) {  // producer only
    const std::uint64_t t = tail_.load(std::memory_order_relaxed);
    if (t - head_cache_ > mask_) {
      head_cache_ = head_.load(std::memory_order_acquire);
      if (t - head_cache_ > mask_) return false;
    }
    buf_[t & mask_] = p;
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }

  void* pop() {  // consumer only
    const std::uint64_t h = head_.load(std::memory_order_relaxed);
    if (h == tail_cache_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (h == tail_cache_) return nullptr;
    }
    void* p = buf_[h & mask_];
    head_.store(h + 1, std::memory_order_release);
    return p;
  }

 private:
  alignas(64) std::atomic<std::uint64_t> head_{0};  // consumer-owned line
  std::uint64_t tail_cache_ = 0;
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // producer-owned line
  std::uint64_t head_cache_ = 0;
  alignas(64) void** buf_ = nullptr;  // read-only after init
  std::uint64_t mask_ = 0;
};

// T x T rings (producer p -> consumer c), rings and buffers in one mmap'd region.
class QueueMatrix {
 public:
  // capacity is rounded up to a power of two. False if the mapping failed.
  bool init(unsigned threads, std::uint32_t capacity);
  SpscRing& ring(unsigned producer, unsigned consumer) {
    return rings_[producer * threads_ + consumer];
  }
  unsigned threads() const { return threads_; }

 private:
  MmapRegion region_;
  SpscRing* rings_ = nullptr;
  unsigned threads_ = 0;
};

}  // namespace heapscope::workloads
