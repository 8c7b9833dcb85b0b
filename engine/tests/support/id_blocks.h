// Blocks that carry an id in their first and last words, for the stress tests in which
// threads free each other's blocks: every free checks that nothing overwrote a live block.
#pragma once

#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>

#include "test_support.h"

namespace hs_test {

// Checked pages (check_frees, on by default in Debug builds) are neither taken over (their
// owner's free checks walk the page's lists without the full-list lock) nor swept by the
// idle-owner give-back: the tests of both make unchecked pages in every build.
class UncheckedPagesTest : public testing::Test {
 protected:
  ScopedOption unchecked_{hs_option_check_frees, 0};
};

inline void* block_new(size_t size, uint64_t id) {
  auto* p = static_cast<uint64_t*>(hs_malloc(size));
  if (p == nullptr) std::abort();
  p[0] = id;
  p[size / sizeof(uint64_t) - 1] = ~id;
  return p;
}

inline bool block_intact(const void* block, size_t size, uint64_t id) {
  const auto* p = static_cast<const uint64_t*>(block);
  return p[0] == id && p[size / sizeof(uint64_t) - 1] == ~id;
}

// Waits, without calling the allocator, until another thread moves `flag` to `value`.
inline void wait_for(const std::atomic<int>& flag, int value) {
  while (flag.load(std::memory_order_acquire) < value) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// A table of id blocks that threads replace concurrently, the sizes cycling through `sizes`
// by id. Corrupted blocks are counted, not asserted on, so any thread may find one.
class BlockSlots {
 public:
  BlockSlots(size_t count, std::vector<size_t> sizes)
      : sizes_(std::move(sizes)), slots_(count), ids_(count) {}
  size_t count() const { return slots_.size(); }
  size_t corrupted() const { return corrupted_.load(); }

  // Puts a fresh block in slot i, freeing (and checking) whatever was there; only while no
  // other thread uses the slot.
  void fill(size_t i) {
    const uint64_t id = next_id_.fetch_add(1);
    void* block = block_new(size_of(id), id);
    void* old = slots_[i].exchange(nullptr, std::memory_order_acq_rel);
    if (old != nullptr) check_and_free(old, ids_[i].load(std::memory_order_relaxed));
    ids_[i].store(id, std::memory_order_relaxed);
    slots_[i].store(block, std::memory_order_release);
  }
  // Takes slot i's block (if any), checks and frees it, and puts a fresh block there.
  void replace(size_t i) {
    void* old = slots_[i].exchange(nullptr, std::memory_order_acq_rel);
    if (old == nullptr) return;
    check_and_free(old, ids_[i].load(std::memory_order_relaxed));
    const uint64_t id = next_id_.fetch_add(1);
    void* block = block_new(size_of(id), id);
    ids_[i].store(id, std::memory_order_relaxed);
    slots_[i].store(block, std::memory_order_release);
  }
  // Checks and frees every block left (no other thread may use the table now).
  void drain() {
    for (size_t i = 0; i < slots_.size(); ++i) {
      void* block = slots_[i].exchange(nullptr);
      if (block != nullptr) check_and_free(block, ids_[i].load());
    }
  }

 private:
  size_t size_of(uint64_t id) const { return sizes_[id % sizes_.size()]; }
  void check_and_free(void* block, uint64_t id) {
    if (!block_intact(block, size_of(id), id)) corrupted_.fetch_add(1);
    hs_free(block);
  }

  std::vector<size_t> sizes_;
  std::vector<std::atomic<void*>> slots_;
  std::vector<std::atomic<uint64_t>> ids_;
  std::atomic<uint64_t> next_id_{1};
  std::atomic<size_t> corrupted_{0};
};

}  // namespace hs_test
