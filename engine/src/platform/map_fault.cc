// Fault injection for the mapping calls (the fault_map_every option), the same on every OS:
// each platform file's map_aligned and map_pages ask map_fault_due() first.
#include <errno.h>

#include <atomic>

#include "platform/platform.h"

namespace heapscope::os {

namespace {

std::atomic<unsigned long> g_map_fault_every{0};
std::atomic<unsigned long> g_map_calls{0};

}  // namespace

bool map_fault_due() {
  unsigned long every = g_map_fault_every.load(std::memory_order_relaxed);
  if (every == 0) return false;
  if (g_map_calls.fetch_add(1, std::memory_order_relaxed) % every != every - 1) return false;
  errno = ENOMEM;
  return true;
}

void set_map_fault_interval(long n) {
  g_map_calls.store(0, std::memory_order_relaxed);
  g_map_fault_every.store(n > 0 ? static_cast<unsigned long>(n) : 0, std::memory_order_relaxed);
}

}  // namespace heapscope::os
