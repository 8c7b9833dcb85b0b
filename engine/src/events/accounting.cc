// The tracked entry points the hook sites divert to while tracking is on. Each runs the
// untracked operation with the thread's depth raised (so the hook sites inside let it through),
// then records the outcome in the live table and the counters under the block's shard lock,
// and dispatches one event after the lock is released.
#include "events/events_hooks.h"  // defines HS_MEMORY_EVENTS
#if HS_MEMORY_EVENTS
#include "core/alloc_inline.h"
#include "core/spin_lock.h"
#include "events/callbacks.h"
#include "events/events_hooks.h"
#include "events/live_table.h"
#include "events/tracking_state.h"
#include "heapscope/heapscope.h"

namespace heapscope {
namespace events {
namespace {

inline uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

size_t histogram_bucket(size_t request) {
  size_t bits = request == 0 ? 0 : 64 - static_cast<size_t>(__builtin_clzll(request));
  return bits < HS_MEMORY_HISTOGRAM_BUCKETS ? bits : HS_MEMORY_HISTOGRAM_BUCKETS - 1;
}

std::atomic<uint32_t> g_peak_lock{0};

// Adds delta to live bytes and returns the new value, moving the peak when it is passed.
uint64_t live_add(int64_t delta) {
  uint64_t total =
      g_counters.live_bytes.fetch_add(static_cast<uint64_t>(delta), std::memory_order_relaxed) +
      static_cast<uint64_t>(delta);
  if (delta > 0 && total > g_counters.peak_live_bytes.load(std::memory_order_relaxed)) {
    spin_lock(g_peak_lock);
    if (total > g_counters.peak_live_bytes.load(std::memory_order_relaxed)) {
      g_counters.peak_live_bytes.store(total, std::memory_order_relaxed);
      g_counters.peak_time_ms.store(ms_since_first_enable(), std::memory_order_relaxed);
    }
    spin_unlock(g_peak_lock);
  }
  return total;
}

// A tracked block was freed where tracking could not see it (nested inside a callback) and its
// address came back: its bytes leave the live figures now.
void forget(const Tracked& displaced) {
  if (displaced.address == 0) return;
  g_counters.live_count.fetch_sub(1, std::memory_order_relaxed);
  live_add(-static_cast<int64_t>(displaced.usable));
}

// Records a new tracked block (ALLOCATE).
void note_allocation(void* p, size_t request) {
  uint64_t usable = usable_size_impl(p);
  Shard& shard = shard_of(addr(p));
  shard_lock(shard);
  if (!g_tracking_on) {
    shard_unlock(shard);
    return;
  }
  Tracked displaced;
  Tracked* slot = shard_insert(shard, Tracked{addr(p), usable, 0}, &displaced);
  if (slot == nullptr) {  // no memory for the table: the block stays untracked
    shard_unlock(shard);
    return;
  }
  forget(displaced);
  slot->seq = g_counters.accum_count.fetch_add(1, std::memory_order_relaxed) + 1;
  g_counters.live_count.fetch_add(1, std::memory_order_relaxed);
  g_counters.accum_bytes.fetch_add(usable, std::memory_order_relaxed);
  g_counters.histogram[histogram_bucket(request)].fetch_add(1, std::memory_order_relaxed);
  uint64_t total = live_add(static_cast<int64_t>(usable));
  shard_unlock(shard);
  dispatch(HS_MEMORY_ALLOCATE, p, total, static_cast<int64_t>(usable), request);
}

// Takes p out of the table before an operation that may free it (so no other thread can get
// its address back while the table still names it). Returns whether p was tracked.
bool detach(void* p, Tracked* out, uint64_t* period) {
  Shard& shard = shard_of(addr(p));
  shard_lock(shard);
  bool tracked = g_tracking_on && shard_remove(shard, addr(p), out);
  *period = g_period;
  shard_unlock(shard);
  return tracked;
}

// A failed resize leaves p as it was: back into the table, counters untouched.
void reattach(const Tracked& entry, uint64_t period) {
  Shard& shard = shard_of(entry.address);
  shard_lock(shard);
  if (g_tracking_on && g_period == period) {
    Tracked displaced;
    if (shard_insert(shard, entry, &displaced) == nullptr) {
      g_counters.live_count.fetch_sub(1, std::memory_order_relaxed);
      live_add(-static_cast<int64_t>(entry.usable));
    }
  }
  shard_unlock(shard);
}

// The resize of a tracked block succeeded with q (maybe p itself): one RESIZE event.
void note_resize(const Tracked& old, uint64_t period, void* q, size_t request) {
  uint64_t usable = usable_size_impl(q);
  Shard& shard = shard_of(addr(q));
  shard_lock(shard);
  if (!g_tracking_on || g_period != period) {  // a new period forgot the old block
    shard_unlock(shard);
    return;
  }
  Tracked displaced;
  Tracked* slot = shard_insert(shard, Tracked{addr(q), usable, old.seq}, &displaced);
  forget(displaced);
  if (slot == nullptr) {  // untracked from now on: it leaves the live figures
    g_counters.live_count.fetch_sub(1, std::memory_order_relaxed);
    live_add(-static_cast<int64_t>(old.usable));
    shard_unlock(shard);
    return;
  }
  int64_t delta = static_cast<int64_t>(usable) - static_cast<int64_t>(old.usable);
  if (delta > 0) g_counters.accum_bytes.fetch_add(static_cast<uint64_t>(delta));
  uint64_t total = live_add(delta);
  shard_unlock(shard);
  dispatch(HS_MEMORY_RESIZE, q, total, delta, request);
}

// The outcome of a realloc/expand of p that returned q (nullptr: failed, p unchanged).
void* finish_resize(void* p, bool tracked, const Tracked& old, uint64_t period, void* q,
                    size_t request) {
  if (q == nullptr) {
    if (tracked) reattach(old, period);
  } else if (tracked) {
    note_resize(old, period, q, request);
  } else {
    note_allocation(q, request);  // a block tracking did not know: counted from now on
  }
  (void)p;
  return q;
}

}  // namespace
}  // namespace events

namespace events {
void accounting_fork(int phase) {
  if (phase == 0) {
    spin_lock(g_peak_lock);
  } else if (phase == 1) {
    spin_unlock(g_peak_lock);
  } else {
    g_peak_lock.store(0, std::memory_order_relaxed);
  }
}
}  // namespace events

using events::Nested;

namespace events {
namespace {
// Runs the untracked allocation `allocate` nested, then records its block (if any) as one
// ALLOCATE of `request` bytes.
template <typename Allocate>
HS_ALWAYS_INLINE void* tracked_allocation(size_t request, Allocate allocate) {
  void* p;
  {
    Nested nested;
    p = allocate();
  }
  if (p != nullptr) note_allocation(p, request);
  return p;
}
}  // namespace
}  // namespace events

HS_TEXT void* events_malloc(Heap* heap, size_t size) {
  return events::tracked_allocation(size, [&] { return heap_malloc(heap, size); });
}

HS_TEXT void* events_malloc_aligned(Heap* heap, size_t size, size_t alignment) {
  return events::tracked_allocation(size,
                                    [&] { return heap_malloc_aligned(heap, size, alignment); });
}

HS_TEXT void* events_zalloc_aligned(Heap* heap, size_t size, size_t alignment) {
  return events::tracked_allocation(size,
                                    [&] { return heap_zalloc_aligned(heap, size, alignment); });
}

HS_TEXT void events_free(void* p) {
  if (p == nullptr) return;
  events::Tracked entry;
  uint64_t total = 0;
  events::Shard& shard = events::shard_of(events::addr(p));
  events::shard_lock(shard);
  bool tracked = events::g_tracking_on && events::shard_remove(shard, events::addr(p), &entry);
  if (tracked) {
    events::g_counters.live_count.fetch_sub(1, std::memory_order_relaxed);
    total = events::live_add(-static_cast<int64_t>(entry.usable));
    if (events::g_counters.accum_count.load(std::memory_order_relaxed) == entry.seq) {
      events::g_counters.short_lived_count.fetch_add(1, std::memory_order_relaxed);
    }
  }
  events::shard_unlock(shard);
  {
    Nested nested;
    free_impl(p);
  }
  if (tracked) {
    events::dispatch(HS_MEMORY_FREE, p, total, -static_cast<int64_t>(entry.usable), 0);
  }
}

HS_TEXT void* events_realloc(Heap* heap, void* p, size_t new_size, size_t alignment, bool zero) {
  if (p == nullptr) {
    return events::tracked_allocation(
        new_size, [&] { return heap_realloc(heap, nullptr, new_size, alignment, zero); });
  }
  if (new_size == 0) {
    events_free(p);
    return nullptr;
  }
  events::Tracked old;
  uint64_t period;
  bool tracked = events::detach(p, &old, &period);
  void* q;
  {
    Nested nested;
    q = heap_realloc(heap, p, new_size, alignment, zero);
  }
  return events::finish_resize(p, tracked, old, period, q, new_size);
}

HS_TEXT void* events_expand(void* p, size_t new_size) {
  if (p == nullptr) return nullptr;
  events::Tracked old;
  uint64_t period;
  bool tracked = events::detach(p, &old, &period);
  void* q;
  {
    Nested nested;
    q = hs_expand(p, new_size);
  }
  return events::finish_resize(p, tracked, old, period, q, new_size);
}

void events_heap_destroy(Heap* heap) {
  // Collected a batch at a time per shard so the callbacks run without the lock held.
  constexpr size_t kBatch = 128;
  events::Tracked dead[kBatch];
  for (size_t s = 0; s < events::kShardCount; s++) {
    events::Shard& shard = events::shard_at(s);
    for (;;) {
      uint64_t totals[kBatch];
      shard_lock(shard);
      if (!events::g_tracking_on) {
        events::shard_unlock(shard);
        return;
      }
      size_t n = events::shard_remove_if(
          shard,
          [heap](uintptr_t address) {
            const Page* page = page_of(reinterpret_cast<void*>(address));
            return page != nullptr && __atomic_load_n(&page->heap, __ATOMIC_RELAXED) == heap;
          },
          dead, kBatch);
      for (size_t i = 0; i < n; i++) {
        events::g_counters.live_count.fetch_sub(1, std::memory_order_relaxed);
        totals[i] = events::live_add(-static_cast<int64_t>(dead[i].usable));
      }
      events::shard_unlock(shard);
      for (size_t i = 0; i < n; i++) {
        events::dispatch(HS_MEMORY_FREE, reinterpret_cast<void*>(dead[i].address), totals[i],
                         -static_cast<int64_t>(dead[i].usable), 0);
      }
      if (n < kBatch) break;
    }
  }
}

}  // namespace heapscope

#endif  // HS_MEMORY_EVENTS
