// The public memory-events functions (heapscope/memory_events.h). With the events compiled out
// they link and report the subsystem off.
#include "events/events_hooks.h"
#include "heapscope/memory_events.h"

#if HS_MEMORY_EVENTS
#include "core/thread.h"
#include "events/callbacks.h"
#include "events/live_table.h"
#include "events/tracking_state.h"
#endif

using namespace heapscope;

extern "C" {

#if HS_MEMORY_EVENTS

bool hs_memory_events_available(void) { return true; }

// Process start-up reads HEAPSCOPE_MEMORY_EVENTS; running it first makes an explicit call
// authoritative even before the first allocation, and the query true from the start.
bool hs_memory_events_set_enabled(bool enabled) {
  process_init();
  return events::tracking_set(enabled);
}

bool hs_memory_events_enabled(void) {
  process_init();
  return events_gate_open();
}

bool hs_memory_events_snapshot(hs_memory_snapshot_t* out) { return events::tracking_snapshot(out); }

bool hs_memory_events_set_callback(hs_memory_change_kind_t kind, hs_memory_change_fn* fn,
                                   void* arg) {
  return events::callback_set(kind, fn, arg);
}

bool hs_memory_events_visit(hs_memory_visit_fn* fn, void* arg) {
  if (fn == nullptr || events::in_callback()) return false;
  // The visitor's own allocations are untracked, so they never wait for a shard held here.
  events::Nested nested;
  for (size_t i = 0; i < events::kShardCount; i++) {
    events::Shard& shard = events::shard_at(i);
    events::shard_lock(shard);
    bool go_on = events::shard_for_each(shard, [&](const events::Tracked& entry) {
      return fn(reinterpret_cast<void*>(entry.address), entry.usable, arg);
    });
    events::shard_unlock(shard);
    if (!go_on) break;
  }
  return true;
}

#else

bool hs_memory_events_available(void) { return false; }
bool hs_memory_events_set_enabled(bool enabled) {
  (void)enabled;
  return false;
}
bool hs_memory_events_enabled(void) { return false; }
bool hs_memory_events_snapshot(hs_memory_snapshot_t* out) {
  (void)out;
  return false;
}
bool hs_memory_events_set_callback(hs_memory_change_kind_t kind, hs_memory_change_fn* fn,
                                   void* arg) {
  (void)kind;
  (void)fn;
  (void)arg;
  return false;
}
bool hs_memory_events_visit(hs_memory_visit_fn* fn, void* arg) {
  (void)fn;
  (void)arg;
  return false;
}

#endif

}  // extern "C"
