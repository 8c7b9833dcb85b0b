// Heaps: one per thread (plus first-class heaps), a direct table from size to page and a page
// queue per size class; the generic malloc and free paths, and the heap life cycle.
#pragma once

#include <atomic>
#include <cstddef>

#include "core/common.h"
#include "core/page.h"
#include "core/size_class.h"
#include "core/stats.h"
#include "heapscope/profile.h"
#include "platform/thread_local.h"

namespace heapscope {

struct ThreadData;

// The direct table starts out pointing every slot at the (always empty) page, so a heap
// that has allocated nothing yet, and the static empty heap, miss into the generic path.
struct DirectTable {
  Page* slots[kDirectSlots];         // (size+15)/16, sizes up to kSmallDirectMax
  Page* medium[kMediumDirectSlots];  // (size+255)/256, sizes above that up to kMediumBlockMax
  constexpr DirectTable() : slots(), medium() {
    for (Page*& slot : slots) slot = &g_empty_page;
    for (Page*& slot : medium) slot = &g_empty_page;
  }
};

// A direct-table slot. With memory events compiled in, another thread may point a heap's slots
// at the empty page (heaps_divert_direct_tables), so slots are read and written as relaxed
// atomics there: the same plain moves on x86-64 and AArch64, but a defined race.
HS_ALWAYS_INLINE Page* direct_slot_load(Page* const* slot) {
#if defined(HS_MEMORY_EVENTS) && HS_MEMORY_EVENTS
  return __atomic_load_n(slot, __ATOMIC_RELAXED);
#else
  return *slot;
#endif
}
HS_ALWAYS_INLINE void direct_slot_store(Page** slot, Page* page) {
#if defined(HS_MEMORY_EVENTS) && HS_MEMORY_EVENTS
  __atomic_store_n(slot, page, __ATOMIC_RELAXED);
#else
  *slot = page;
#endif
}

struct alignas(64) Heap {
  DirectTable direct;  // size -> the first page of its class, maybe with free blocks
  // Bytes until the next profiler sample. With the profiler compiled in it doubles as the
  // requested-bytes counter (requested = requested_folded + countdown_armed - countdown), so
  // the fast path pays one subtract-and-branch in place of an add, not on top of it.
  int64_t sample_countdown = INT64_MAX;
  int64_t countdown_armed = INT64_MAX;  // the value sample_countdown was last set to
  uint64_t requested_folded = 0;        // requested bytes counted before that
  uintptr_t thread_id = 0;
  HeapCounters counters;
  PageQueue queues[kBinCount];
  PageQueue full;
  // The one empty large page (a single-block page) kept for a malloc/free ping-pong; keeping
  // one per class would hold megabytes per class resident when a program cycles sizes.
  Page* kept_large = nullptr;
  // A remote free landed in a full page. A freer pushes its block, then raises the hint
  // only if it finds it lowered; the owner lowers it, then scans its full pages. All four are
  // sequentially consistent, so a freer that finds the hint raised pushed before the owner's
  // next lowering, and the scan after that lowering sees its block: none goes unannounced.
  std::atomic<bool> remote_hint{false};
  ThreadData* td = nullptr;
  bool is_default = false;
  uint32_t owner_depth = 0;       // a default heap: nesting of its thread's OwnerSlowPath
  Heap* registry_next = nullptr;  // all live heaps (for statistics) / pool free list
  Heap* registry_prev = nullptr;
  Heap* user_next = nullptr;           // the thread's first-class heaps
  std::atomic<uint32_t> huge_lock{0};  // guards huge_list (first-class heaps only)
  Page* huge_list = nullptr;
  // Profiler state of this heap (profiler/sampling.cc), touched on the slow path only.
  uint64_t prof_generation = 0;                // the sampling generation the countdown belongs to
  uint64_t prof_interval = 0;                  // mean sample distance now (0: not sampling)
  uint64_t prof_bytes_since_sample = 0;        // distance covered by the last sample
  hs_profiler_t* prof_owner = nullptr;         // user profiler sampling this heap now
  void* prof_last_sample = nullptr;            // the block record_sample saw last
  hs_profiler_t* attached_profiler = nullptr;  // hs_heap_profile
  bool profile_disabled = false;               // hs_heap_profile_disable
};

// What other threads touch to take over an idle owner's full pages (takeover.cc) or give
// back its emptied ones (idle_owner.cc). It lives beside the heap in its pool slot and is
// never re-initialized when the slot is reused, so a thread holding a stale heap pointer
// always meets a valid lock.
struct HeapShared {
  std::atomic<uint32_t> full_lock{0};  // guards Heap::full: the owner's changes and takeovers
  // The owner's thread id while its full pages may be taken and its emptied pages swept (a
  // live thread's default heap), else 0. Written under full_lock and owner_lock both.
  std::atomic<uintptr_t> takeover_tid{0};
  std::atomic<int64_t> hint_raised_ms{0};  // when remote_hint last went from false to true
  // Idle owners (idle_owner.cc): the owner holds owner_lock through its slow paths and
  // counts them in slow_paths; a thread freeing into its pages may take the lock instead (only
  // ever trying it) to give back the pages that emptied while the owner was idle. Three lines
  // by writer: the owner's every slow path writes the first; the idle bookkeeping, which
  // freeing threads write, sits on a line of its own (sharing one cost larson's workers a
  // miss on every slow path: 1.2x its time).
  alignas(64) std::atomic<uint32_t> owner_lock{0};
  std::atomic<uint64_t> slow_paths{0};
  // Where the next sweep resumes (a bin, and how many of its queue's pages were looked at),
  // read and written only under owner_lock: one sweep does a bounded amount of work.
  uint32_t sweep_bin = 1;
  uint32_t sweep_skip = 0;
  alignas(64) std::atomic<uint64_t> idle_seen_paths{0};  // slow_paths when a freer last looked
  std::atomic<int64_t> idle_seen_ms{0};                  // and when slow_paths last changed
  std::atomic<int64_t> idle_swept_ms{0};                 // when a freer last swept the heap
};
HeapShared* heap_shared(const Heap* heap);  // of any heap from heap_struct_alloc

extern Heap g_empty_heap;
// Constant-initialized TLS (platform/thread_local.h), so no wrapper call on the fast path.
HS_THREAD_LOCAL_EXTERN(Heap*, tls_heap);

// ---- generic paths (malloc_generic.cc, free.cc) ---------------------------------------------
// count_sample: false when the fast path already charged the sample countdown.
void* malloc_generic(Heap* heap, size_t size, bool count_sample = true);
void* malloc_sampled(Heap* heap, size_t size);
void free_unusual(void* p);  // huge tails and foreign pointers
void free_generic(Page* page, void* p);
// The full check of a free (kPageChecked pages, every free in the hardened build): aborts
// naming p when it is not a block start or its block is free; returns when the free is sound.
void check_free(Page* page, void* p, bool owner);
void free_own_checked(Page* page, void* p);  // check_free, then the owner's push

// ---- life cycle (heap_lifecycle.cc) ----------------------------------------------------------
void heap_delete_migrate(Heap* heap);
void heap_destroy_pages(Heap* heap);
void heap_init(Heap* heap, ThreadData* td, bool is_default);
void heap_adopt_page(Heap* heap, Page* page);  // put a reclaimed page into heap's queues
// Frees the kept last page of each class that stayed empty and handed out no block since
// the last purge round; true if an empty one was kept because it did (it waits a round).
bool heap_release_idle_pages(Heap* heap);
void heap_release_all(Heap* heap);  // collect everything; free empty pages

// ---- growth in place (grow_in_place.cc) -------------------------------------------------------
bool large_grow_in_place(Page* page, size_t new_size);  // owner's one-block page
void* malloc_one_block_page(Heap* heap, size_t size);   // growing realloc, sampled small block

}  // namespace heapscope
