// The generic (slow) malloc path: the fast path's miss (alloc_inline.h) finds or makes a page
// with a free block, serves sizes above the direct tables and huge sizes, and places samples.
//
//   malloc_impl ──(direct page has a block)──> pop            [alloc_inline.h]
//        └─ malloc_generic ─> find_page ─> collect / extend / full list / fresh page
#include <errno.h>

#include "core/alloc_inline.h"
#include "core/heap.h"
#include "core/huge.h"
#include "core/idle_owner.h"
#include "core/page_queue.h"
#include "core/profiler_hooks.h"
#include "core/purge_thread.h"
#include "core/segment.h"
#include "core/thread.h"

namespace heapscope {

HS_HOT_TEXT static Page* page_fresh(Heap* heap, size_t bin) {
  // A large block of another size: the kept empty large page (page_retire) gives its
  // resident slices back first, so that a buffer of a new size reuses them instead of
  // faulting in fresh ones next to them.
  if (bin_block_size(bin) > kMediumBlockMax) heap_release_kept_large(heap);
  Page* page = span_alloc(heap->td, bin_page_slices(bin), bin);
  if (page == nullptr) return nullptr;
  page_init(page, heap, bin);
  page_extend(page);
  queue_push(heap, page, true);
  return page;
}

// The first page of the bin's queue with a free block (collecting and extending as it goes),
// or nullptr. A page without one goes to the back of the queue the first time it is passed
// and to the full list the second: in a steady churn the owner frees into it before the
// allocations come round to it again, and a page in the full list takes those frees off the
// fast path (the full-list lock, the flag set and cleared) only to come back; pages that
// really stay full still park there after one more look.
HS_HOT_TEXT static Page* queue_page_with_block(Heap* heap, size_t bin) {
  PageQueue* queue = &heap->queues[bin];
  Page* page = queue->first;
  while (page != nullptr) {
    Page* next = page->next;
    if (page->free == nullptr) heap->td->remote_frees_collected += page_collect(page);
    if (page->free == nullptr) page_extend(page);
    if (page->free != nullptr) {
      page->passed_dry = 0;
      if (page != queue->first) {
        queue_remove(heap, page);
        queue_push(heap, page, true);
      }
      return page;
    }
    if (page->passed_dry == 0 && page != queue->last) {
      page->passed_dry = 1;
      queue_remove(heap, page);
      queue_push(heap, page, false);
      page = next;
      continue;
    }
    if (!mark_full(heap, page)) continue;  // remote frees arrived: collect them next round
    page->passed_dry = 0;
    page = next;
  }
  return nullptr;
}

HS_HOT_TEXT static Page* find_page(Heap* heap, size_t bin) {
  // Sizes above the direct tables land here on every call: serve them straight from the
  // queue's first page when it has a block, before any housekeeping.
  Page* first = heap->queues[bin].first;
  if (first != nullptr && page_ready_block(first) != nullptr) return first;
  if (heap->remote_hint.load(std::memory_order_relaxed) &&
      heap->remote_hint.exchange(false, std::memory_order_seq_cst)) {
    heap_collect_full(heap);
  }
  if (HS_UNLIKELY(g_abandoned_freed_into.load(std::memory_order_relaxed))) {
    reclaim_freed_into();
  }
  reclaim_returned_pages(heap->td);
  purge_due(heap->td, false);
  sweep_idle_owner_due();
  if (Page* page = queue_page_with_block(heap, bin)) return page;
  // A thread without a segment yet takes over an exited thread's segment (into its default
  // heap) before making a fresh page: its pages of this class may have room. Else threads
  // that allocate a little and exit, leaving a block alive, would each leave a page of their
  // own pinned by it (mimalloc-bench's mleak: hundreds of slices with one resident 4 KiB page
  // each). A thread with segments adopts only when they have no room (span_alloc): a
  // long-lived thread adopting eagerly would gather every exited thread's segment while the
  // threads that follow map fresh ones. (The queue holds no page with a block now, so the
  // second scan sees adopted pages only.)
  if (heap == heap->td->default_heap && heap->td->segments == nullptr) {
    reclaim_abandoned(heap->td, bin_page_slices(bin));
    if (Page* page = queue_page_with_block(heap, bin)) return page;
  }
  return page_fresh(heap, bin);
}

// The fast path's countdown crossed zero (only with the profiler compiled in).
HS_TEXT HS_NOINLINE void* malloc_sampled(Heap* heap, size_t size) {
#if HS_PROFILER
  OwnerSlowPath slow_path(heap);
  bool sample = sample_countdown_expired(heap, size);
  if (!sample && size <= kMediumBlockMax) {
    // Mostly the idle re-check of a stopped profiler (every kIdleRecheckBytes): finish as the
    // fast path would have, not through the generic path.
    Page* page = direct_page(heap, size);
    if (Block* block = page_ready_block(page)) return page_pop_charged(heap, page, block, size);
  }
  void* p = nullptr;
  if (sample && sample_wants_own_page(heap, size)) {
    // A live sample flags its page, sending every free into that page off the fast path
    // for as long as it lives: on a page of its own it flags nothing else. The page costs
    // a slice of address space and an OS page of memory per live sample, so only at
    // intervals where that stays small against the bytes between samples; and a page's
    // setup and release per sample, so only for small blocks, whose pages hold hundreds
    // of others and whose samples are rare per allocation.
    p = malloc_one_block_page(heap, size);
  }
  if (p == nullptr) p = malloc_generic(heap, size, false);
  if (sample && p != nullptr) record_sample(heap, p, size);
  return p;
#else
  return malloc_generic(heap, size, false);
#endif
}

// Every allocation reaching malloc_generic was charged to the countdown (the requested-bytes
// count) by its caller or below; a failed one is taken back out.
static void uncount_requested(Heap* heap, size_t size) {
#if HS_PROFILER
  countdown_uncount(heap, size);
#else
  (void)heap;
  (void)size;
#endif
}

HS_TEXT HS_NOINLINE void* malloc_generic(Heap* heap, size_t size, bool count_sample) {
  // While memory events are tracking, every heap's direct tables are diverted to the empty
  // page, so each small and medium call misses into here: dispatch it (an uncharged call; a
  // charged one came through a page the diversion had not reached yet, and stays untracked).
  if (count_sample && events_intercept()) return events_malloc(heap, size);
  if (HS_UNLIKELY(heap == &g_empty_heap)) {
    heap = thread_heap_init();
    if (heap == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
  }
  if (HS_UNLIKELY(size > kMaxAllocSize)) {
    errno = ENOMEM;
    return nullptr;
  }
  purge_thread_start_if_wanted();  // before the lock: starting a thread allocates
  OwnerSlowPath slow_path(heap);
#if HS_PROFILER
  if (count_sample && HS_UNLIKELY(countdown_charge(heap, size)) &&
      sample_countdown_expired(heap, size)) {
    // A tail call would lose this frame's return address, which the stack walk needs.
    void* p = malloc_generic(heap, size, false);
    if (p != nullptr) record_sample(heap, p, size);
    return p;
  }
#else
  (void)count_sample;
#endif
  if (size > kHugeMin) {
    void* p = huge_alloc(heap, size, 0, false);
    if (p == nullptr) {
      uncount_requested(heap, size);
      errno = ENOMEM;
    }
    return p;
  }
  size_t bin = bin_of(size);
  Page* page = find_page(heap, bin);
  if (HS_UNLIKELY(page == nullptr)) {
    uncount_requested(heap, size);
    errno = ENOMEM;
    return nullptr;
  }
  // The page is its queue's first, which the direct slot mirrors, unless the slot was
  // diverted (memory events tracking, or the thread started another, idle_owner.h): each
  // diverted size is repaired when it first misses (while tracking is off).
  if (size <= kMediumBlockMax && direct_page(heap, size) != page) {
#if HS_MEMORY_EVENTS
    if (!events_gate_open()) direct_update(heap, bin);
#else
    direct_update(heap, bin);
#endif
  }
  return page_pop_charged(heap, page, page->free, size);
}

}  // namespace heapscope
