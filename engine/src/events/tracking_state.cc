// Tracking on/off, the tracking period and the consistent snapshot (see tracking_state.h).
#include "events/events_hooks.h"  // defines HS_MEMORY_EVENTS
#if HS_MEMORY_EVENTS
#include <string.h>

#include "core/segment.h"
#include "core/thread.h"
#include "events/events_hooks.h"
#include "events/live_table.h"
#include "events/summary.h"
#include "events/tracking_state.h"
#include "platform/platform.h"

namespace heapscope {

uint8_t g_events_gate = 0;
std::atomic<uint32_t> g_events_sync{0};
HS_THREAD_LOCAL(uint32_t, tls_events_depth, 0);

void events_process_init() {
  const char* value = os::get_env("HEAPSCOPE_MEMORY_EVENTS");
  if (value != nullptr && value[0] == '1' && value[1] == '\0') events::tracking_set(true);
  events::summary_init();
}

namespace events {

Counters g_counters;
bool g_tracking_on = false;
uint64_t g_period = 0;

namespace {
int64_t g_first_enable_ms = -1;  // the origin of peak_time_ms
}  // namespace

Nested::Nested() { tls_events_depth++; }
Nested::~Nested() { tls_events_depth--; }

bool tracking_set(bool on) {
  lock_all_shards();
  bool previous = g_tracking_on;
  if (on && !previous) {
    // A new period: blocks of earlier periods are forgotten, so their frees count nothing.
    g_period++;
    clear_all_shards();
    g_counters.live_bytes.store(0, std::memory_order_relaxed);
    g_counters.live_count.store(0, std::memory_order_relaxed);
    if (g_first_enable_ms < 0) g_first_enable_ms = os::now_ms();
  }
  g_tracking_on = on;
  __atomic_store_n(&g_events_gate, static_cast<uint8_t>(on ? 1 : 0), __ATOMIC_RELAXED);
  // The fast paths test no gate: while tracking, small and medium allocations find every
  // direct table pointing at the empty page and miss into malloc_generic, and frees find
  // normal segments tagged kMapSegmentTracked and leave for free_unusual; both dispatch.
  // (Switched off, the tables repair themselves as each size misses once.)
  if (on) heaps_divert_direct_tables();
  segment_map_retag(on);
  unlock_all_shards();
  return previous;
}

uint64_t ms_since_first_enable() {
  int64_t origin = __atomic_load_n(&g_first_enable_ms, __ATOMIC_RELAXED);
  int64_t now = os::now_ms();
  return origin < 0 || now < origin ? 0 : static_cast<uint64_t>(now - origin);
}

bool tracking_snapshot(hs_memory_snapshot_t* out) {
  if (out == nullptr || out->size != sizeof(hs_memory_snapshot_t) ||
      out->version != HS_MEMORY_SNAPSHOT_VERSION) {
    return false;
  }
  lock_all_shards();
  out->enabled = g_tracking_on;
  out->live_bytes = g_counters.live_bytes.load(std::memory_order_relaxed);
  out->live_count = g_counters.live_count.load(std::memory_order_relaxed);
  out->accum_bytes = g_counters.accum_bytes.load(std::memory_order_relaxed);
  out->accum_count = g_counters.accum_count.load(std::memory_order_relaxed);
  out->peak_live_bytes = g_counters.peak_live_bytes.load(std::memory_order_relaxed);
  out->peak_time_ms = g_counters.peak_time_ms.load(std::memory_order_relaxed);
  out->short_lived_count = g_counters.short_lived_count.load(std::memory_order_relaxed);
  for (size_t i = 0; i < HS_MEMORY_HISTOGRAM_BUCKETS; i++) {
    out->size_histogram[i] = g_counters.histogram[i].load(std::memory_order_relaxed);
  }
  unlock_all_shards();
  return true;
}

}  // namespace events
}  // namespace heapscope

#endif  // HS_MEMORY_EVENTS
