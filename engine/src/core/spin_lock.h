// A small spin lock for slow paths only (thread.cc): never on a fast path, never held across
// a call that could allocate.
#pragma once

#include <atomic>
#include <cstdint>

namespace heapscope {

void spin_lock(std::atomic<uint32_t>& word);
inline void spin_unlock(std::atomic<uint32_t>& word) { word.store(0, std::memory_order_release); }

}  // namespace heapscope
