// A small spin lock for slow paths only (thread.cc): never on a fast path, never held across
// a call that could allocate.
#pragma once

#include <atomic>
#include <cstdint>

namespace heapscope {

void spin_lock(std::atomic<uint32_t>& word);
inline bool spin_try_lock(std::atomic<uint32_t>& word) {
  return word.load(std::memory_order_relaxed) == 0 &&
         word.exchange(1, std::memory_order_acquire) == 0;
}
inline void spin_unlock(std::atomic<uint32_t>& word) { word.store(0, std::memory_order_release); }

}  // namespace heapscope
