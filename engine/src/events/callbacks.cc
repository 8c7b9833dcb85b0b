// Callback slots and dispatch (see callbacks.h).
#include "events/events_hooks.h"  // defines HS_MEMORY_EVENTS
#if HS_MEMORY_EVENTS
#include <atomic>

#include "core/spin_lock.h"
#include "events/callbacks.h"
#include "events/events_hooks.h"
#include "events/tracking_state.h"
#include "platform/platform.h"

namespace heapscope::events {
namespace {

struct Slot {
  std::atomic<hs_memory_change_fn*> fn{nullptr};  // also read unlocked, as a "none" hint
  void* arg = nullptr;
};

Slot g_slots[HS_MEMORY_CHANGE_KINDS];
std::atomic<uint32_t> g_slot_lock{0};     // the pairs and the phase
std::atomic<uint32_t> g_install_lock{0};  // one waiting installer at a time
uint32_t g_phase = 0;
// Calls started in each phase and not yet returned.
std::atomic<uint64_t> g_in_flight[2];

// The phase of the callback this thread is running, or -1.
HS_THREAD_LOCAL(int, tls_call_phase, -1);

}  // namespace

bool in_callback() { return tls_call_phase >= 0; }

bool callback_set(hs_memory_change_kind_t kind, hs_memory_change_fn* fn, void* arg) {
  if (static_cast<unsigned>(kind) >= HS_MEMORY_CHANGE_KINDS) return false;
  if (in_callback()) {
    // From inside a callback: replace without waiting (the caller's own call is still running
    // and other callbacks may be waiting for it); the phase stays, so a waiting installer is
    // not sent after calls that started later.
    spin_lock(g_slot_lock);
    g_slots[kind].arg = arg;
    g_slots[kind].fn.store(fn, std::memory_order_relaxed);
    spin_unlock(g_slot_lock);
    return true;
  }
  spin_lock(g_install_lock);
  spin_lock(g_slot_lock);
  g_slots[kind].arg = arg;
  g_slots[kind].fn.store(fn, std::memory_order_relaxed);
  uint32_t old_phase = g_phase;
  g_phase ^= 1;
  spin_unlock(g_slot_lock);
  // Calls that copied the previous pair counted themselves in old_phase before the flip.
  while (g_in_flight[old_phase].load(std::memory_order_acquire) != 0) os::yield();
  spin_unlock(g_install_lock);
  return true;
}

void dispatch(hs_memory_change_kind_t kind, void* address, uint64_t total, int64_t delta,
              uint64_t request) {
  if (g_slots[kind].fn.load(std::memory_order_relaxed) == nullptr) return;
  spin_lock(g_slot_lock);
  hs_memory_change_fn* fn = g_slots[kind].fn.load(std::memory_order_relaxed);
  void* arg = g_slots[kind].arg;
  uint32_t phase = g_phase;
  if (fn != nullptr) g_in_flight[phase].fetch_add(1, std::memory_order_relaxed);
  spin_unlock(g_slot_lock);
  if (fn == nullptr) return;
  hs_memory_change_t change{kind, address, total, delta, request};
  {
    Nested nested;
    tls_call_phase = static_cast<int>(phase);
    fn(&change, arg);
    tls_call_phase = -1;
  }
  g_in_flight[phase].fetch_sub(1, std::memory_order_release);
}

void callbacks_fork(int phase) {
  // The installer lock is held while its holder waits for other threads' callbacks, so it is
  // not taken here (a fork from inside a callback would wait for itself); the slot lock guards
  // the pairs it publishes.
  if (phase == 0) {
    spin_lock(g_slot_lock);
  } else if (phase == 1) {
    spin_unlock(g_slot_lock);
  } else {
    g_slot_lock.store(0, std::memory_order_relaxed);
    g_install_lock.store(0, std::memory_order_relaxed);
    g_in_flight[0].store(0, std::memory_order_relaxed);
    g_in_flight[1].store(0, std::memory_order_relaxed);
    tls_call_phase = -1;
  }
}

}  // namespace heapscope::events

#endif  // HS_MEMORY_EVENTS
