// Page queues: page retirement (keeping the last page of a class), the keep bias, and the
// return of full pages that other threads freed into.
#include "core/page_queue.h"

#include "core/idle_owner.h"
#include "core/segment.h"
#include "core/takeover.h"
#include "core/thread.h"

namespace heapscope {

// The keep bias (Page::used): only multi-block pages take it; one-block pages (large blocks,
// growth spans) reach page_retire through free's generic path, which keeps them itself.
HS_HOT_TEXT void page_set_keep_bias(Page* page, bool on) {
  if (page->keep_bias == (on ? 1 : 0)) return;
  // The bias is no block: used_base moves with it, so no free or allocation is derived.
  page->used = on ? page->used + 1 : page->used - 1;
  page->used_base = on ? page->used_base + 1 : page->used_base - 1;
  page->keep_bias = on ? 1 : 0;
}

HS_HOT_TEXT void page_retire(Heap* heap, Page* page) {
  OwnerSlowPath slow_path(heap);
  PageQueue* queue = &heap->queues[page->bin];
  // Keep the last page of a class: a program freeing and reallocating one block must not
  // map and unmap a page each time. A purge round frees it once it has stayed empty since
  // the round before (heap_release_idle_pages).
  // A page taken over from another thread's segment is not kept: it goes back (span_free).
  if (queue->first == page && queue->last == page &&
      segment_owner(segment_of_page(page)) == heap->td) {
    if (page->reserved == 1 && heap->kept_large != page) {
      Page* previous = heap->kept_large;
      heap->kept_large = page;
      // span_free clears kept_large of a page it frees, so `previous` is a live page of
      // this heap; free it unless it is in use again or no longer alone in its queue.
      if (previous != nullptr && previous->used == 0 &&
          heap->queues[previous->bin].first == previous &&
          heap->queues[previous->bin].last == previous) {
        queue_remove(heap, previous);
        span_free(heap->td, previous);
      }
    }
    kept_page_emptied(heap);
    return;
  }
  queue_remove(heap, page);
  span_free(heap->td, page);
}

// A loop that mallocs and frees one block never reaches the allocation slow path, so due
// purges are run from here too (the clock is read once per 16 such frees). The lock only
// then: free_generic frees into a kept large page without it.
HS_HOT_TEXT void kept_page_emptied(Heap* heap) {
  ThreadData* td = heap->td;
  purge_schedule(td);
  if ((++td->kept_page_frees & 15) == 0) {
    OwnerSlowPath slow_path(heap);  // nested in page_retire's, it counts once
    purge_due(td, false);
  }
}

HS_HOT_TEXT void heap_release_kept_large(Heap* heap) {
  Page* kept = heap->kept_large;
  if (kept == nullptr || kept->used != 0) return;
  PageQueue* queue = &heap->queues[kept->bin];
  if (queue->first != kept || queue->last != kept) return;
  queue_remove(heap, kept);
  span_free(heap->td, kept);  // clears kept_large
}

HS_HOT_TEXT void heap_collect_full(Heap* heap) {
  full_list_lock(heap);
  Page* page = heap->full.first;
  while (page != nullptr) {
    Page* next = page->next;
    // Sequentially consistent, as the hint's lowering before it and the remote freer's push
    // and look at the hint (heap.h): a push this scan misses saw the hint lowered and raises it.
    if (page->thread_free.load(std::memory_order_seq_cst) != nullptr) {
      heap->td->remote_frees_collected += page_collect(page);
      unmark_full(heap, page);
      if (page_live(page) == 0) page_retire(heap, page);
    }
    page = next;
  }
  full_list_unlock(heap);
}

}  // namespace heapscope
