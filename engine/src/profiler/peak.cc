#include "profiler/peak.h"

#include <new>

#include "core/spin_lock.h"
#include "platform/platform.h"
#include "profiler/dump.h"
#include "profiler/prof_internal.h"
#include "profiler/profile_copy.h"

namespace heapscope::prof {

namespace {

// One copy and the profile pointing into it, in its own mapping so it outlives any session.
struct PeakSlot {
  ProfileCopy copy;
  ProfileData profile;
};
constexpr size_t kSlotBytes = (sizeof(PeakSlot) + 4095) & ~size_t{4095};

// Guards g_slot: taken by whoever replaces or reads the copy, never by the sampling fast path.
std::atomic<uint32_t> g_peak_lock{0};
PeakSlot* g_slot = nullptr;
// The live estimate that makes the next copy due (guarded by the profiler lock).
double g_next_trigger = 0;

bool try_lock() {
  uint32_t expected = 0;
  return g_peak_lock.compare_exchange_strong(expected, 1, std::memory_order_acquire);
}

void destroy(PeakSlot* slot) {
  if (slot == nullptr) return;
  slot->~PeakSlot();
  os::unmap(slot, kSlotBytes);
}

}  // namespace

bool peak_due(double live_bytes) {
  if (live_bytes < g_next_trigger) return false;
  // Raised now, so the threads sampling until the copy lands do not all take one.
  g_next_trigger = live_bytes * (1.0 + kPeakGrowth);
  return true;
}

void peak_take() {
  void* memory = os::map_pages(kSlotBytes);
  if (memory == nullptr) return;
  auto* slot = new (memory) PeakSlot();
  if (!take_copy(slot->copy, slot->profile)) {
    destroy(slot);
    return;
  }
  if (!try_lock()) {  // a dump is reading the old copy: the next peak replaces it
    destroy(slot);
    return;
  }
  PeakSlot* old = g_slot;
  g_slot = slot;
  spin_unlock(g_peak_lock);
  destroy(old);
}

void peak_reset() {
  {
    LockGuard lock;
    g_next_trigger = 0;
  }
  spin_lock(g_peak_lock);
  PeakSlot* old = g_slot;
  g_slot = nullptr;
  spin_unlock(g_peak_lock);
  destroy(old);
}

bool peak_render(int format, OsBuffer& out) {
  spin_lock(g_peak_lock);
  bool ok = g_slot != nullptr && render_profile(g_slot->profile, format, out);
  spin_unlock(g_peak_lock);
  return ok;
}

void peak_fork_child() { g_peak_lock.store(0, std::memory_order_relaxed); }

}  // namespace heapscope::prof
