// The heap life cycle: set-up, adoption of reclaimed pages, release of idle or empty pages,
// and the end of a first-class heap (migrating its pages, or destroying them with it).
#include "core/heap.h"
#include "core/huge.h"
#include "core/page_counts.h"
#include "core/page_queue.h"
#include "core/profiler_hooks.h"
#include "core/segment.h"
#include "core/spin_lock.h"
#include "core/takeover.h"
#include "core/thread.h"
#include "platform/platform.h"

namespace heapscope {

HS_HOT_TEXT void heap_init(Heap* heap, ThreadData* td, bool is_default) {
  heap->td = td;
  heap->is_default = is_default;
  heap->thread_id = os::thread_id();
  // Page::owner_word keeps the flags above the id (core/page.h).
  if (HS_UNLIKELY((heap->thread_id & ~kOwnerTidMask) != 0)) {
    fatal("thread pointer uses the top byte; page owner words cannot hold it",
          reinterpret_cast<void*>(heap->thread_id));
  }
#if HS_PROFILER
  prof_heap_init(heap);
#endif
}

HS_HOT_TEXT void heap_adopt_page(Heap* heap, Page* page) {
  page_flags_clear(page, kPageInFull);
  page->remote_in_full.store(0, std::memory_order_relaxed);
  __atomic_store_n(&page->heap, heap, __ATOMIC_RELAXED);
  page_set_owner(page, heap->thread_id, std::memory_order_release);
  queue_push(heap, page, false);
}

// The page page_retire kept for a class stays only while the class is in use: at a purge
// round an empty one goes back to its segment (reused without faults until it is purged).
HS_HOT_TEXT bool heap_release_idle_pages(Heap* heap) {
  if (heap == heap->td->default_heap) heap_collect_foreign(heap);
  bool waiting = false;
  for (size_t bin = 1; bin < kBinCount; ++bin) {
    Page* page = heap->queues[bin].first;
    if (page == nullptr) continue;
    // A page that handed out blocks since its counts were last folded (the round before, or
    // an owner's statistics read) was in use a moment ago: a class whose last page empties
    // and fills again in phases keeps it rather than freeing it each round and carving a new
    // one (or faulting one in).
    const bool idle = page->pops == 0;
    // The page allocations come from: other threads' statistics see it within a round.
    page_fold_counts(page);
    if (page != heap->queues[bin].last || page_live(page) != 0) continue;
    if (page->thread_free.load(std::memory_order_relaxed) != nullptr) continue;
    if (!idle) {
      waiting = true;
      continue;
    }
    queue_remove(heap, page);
    span_free(heap->td, page);
  }
  return waiting;
}

HS_HOT_TEXT void heap_release_all(Heap* heap) {
  // A round run by the walk's own span_free could free the page it goes to next: the
  // callers run one after it.
  PurgeRoundsDeferred no_round_inside(heap->td);
  heap_for_each_page(heap, [heap](Page* page) {
    heap->td->remote_frees_collected += page_collect(page);
    if (page_live(page) == 0) {
      queue_remove(heap, page);
      span_free(heap->td, page);
    }
  });
}

HS_HOT_TEXT void heap_return_taken(Heap* heap) {
  heap_for_each_page(heap, [heap](Page* page) {
    if (segment_owner(segment_of_page(page)) == heap->td) return;
    queue_remove(heap, page);
    return_taken_page(page);
  });
}

void heap_delete_migrate(Heap* heap) {
  Heap* target = heap->td->default_heap;
  heap_for_each_page(heap, [heap, target](Page* page) {
    page_fold_counts(page);  // what happened so far is the deleted heap's
    queue_remove(heap, page);
    heap_adopt_page(target, page);
  });
  spin_lock(heap->huge_lock);
  for (Page* page = heap->huge_list; page != nullptr; page = page->next) {
    // The default heap keeps no huge list; the block simply belongs to it from now on.
    page->huge_tracked.store(0, std::memory_order_relaxed);
    __atomic_store_n(&page->heap, target, __ATOMIC_RELEASE);
  }
  heap->huge_list = nullptr;
  spin_unlock(heap->huge_lock);
}

void heap_destroy_pages(Heap* heap) {
#if HS_PROFILER
  prof_heap_destroy(heap);
#endif
  heap_for_each_page(heap, [heap](Page* page) {
    page_collect(page);  // remote frees: counted with the page's fold (span_free)
    heap->counters.free_count.add(page_live(page));
    heap->counters.freed_total.add(uint64_t{page_live(page)} * page->block_size);
    queue_remove(heap, page);
    span_free(heap->td, page);
  });
  for (;;) {
    spin_lock(heap->huge_lock);
    Page* page = heap->huge_list;
    spin_unlock(heap->huge_lock);
    if (page == nullptr) break;
    heap->counters.free_count.add(1);
    heap->counters.freed_total.add(page->block_size);
    huge_free(page);  // unlinks it from huge_list under the lock
  }
}

}  // namespace heapscope
