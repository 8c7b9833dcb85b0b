// Page queues: per size class, the heap's pages of that class (first = where allocation looks
// first, mirrored into the direct table), plus the full list of pages with no free block.
// The queue operations are inline: the generic malloc and free paths call them on every
// page change.
#pragma once

#include "core/assert.h"
#include "core/heap.h"
#include "core/idle_owner.h"
#include "core/page.h"
#include "core/page_counts.h"
#include "core/segment.h"
#include "core/size_class.h"
#include "core/takeover.h"
#include "events/events_hooks.h"

namespace heapscope {

// The keep bias (Page::used): a multi-block page alone in its queue counts one more block.
void page_set_keep_bias(Page* page, bool on);

// The direct-table slots of the sizes a class up to kMediumBlockMax serves (above the
// previous class, up to its own): table[low] to table[high].
struct DirectSlots {
  Page** table;
  size_t low;
  size_t high;
};
inline DirectSlots direct_slots_of(Heap* heap, size_t bin) {
  const size_t block_size = bin_block_size(bin);
  const bool small = block_size <= kSmallDirectMax;
  const size_t step = small ? kMinAlign : kMediumDirectStep;
  return {small ? heap->direct.slots : heap->direct.medium,
          bin == 1 ? 0 : bin_block_size(bin - 1) / step + 1, block_size / step};
}

inline void direct_update(Heap* heap, size_t bin) {
  if (bin_block_size(bin) > kMediumBlockMax) return;
  Page* page = heap->queues[bin].first;
  if (page == nullptr) page = &g_empty_page;
  const auto [table, low, high] = direct_slots_of(heap, bin);
  for (size_t slot = low; slot <= high; ++slot) direct_slot_store(&table[slot], page);
#if HS_MEMORY_EVENTS
  // While memory events are tracking, the slots stay on the empty page (every call must miss
  // into malloc_generic). The sync point pairs with heaps_divert_direct_tables': either this
  // thread sees the gate open, or the diversion overwrites what it just stored.
  events_sync_point();
  if (events_gate_open()) {
    for (size_t slot = low; slot <= high; ++slot) direct_slot_store(&table[slot], &g_empty_page);
  }
#endif
}

inline PageQueue* queue_of(Heap* heap, const Page* page) {
  return (page_flags(page) & kPageInFull) != 0 ? &heap->full : &heap->queues[page->bin];
}

// After every change of a (not full) queue: its page has the bias exactly when it is alone,
// unless it is a page taken over from another thread's segment (takeover.cc), which goes
// back when it empties rather than pin that segment.
inline void queue_fix_keep_bias(Heap* heap, PageQueue* queue) {
  Page* first = queue->first;
  if (queue == &heap->full || first == nullptr) return;
  bool alone = first == queue->last;
  page_set_keep_bias(
      first, alone && first->reserved > 1 && segment_owner(segment_of_page(first)) == heap->td);
  if (!alone) page_set_keep_bias(queue->last, false);
}

inline void queue_remove(Heap* heap, Page* page) {
  PageQueue* queue = queue_of(heap, page);
  HS_ASSERT_INTERNAL(page->heap == heap);
  // The queues change only under the thread's slow-path lock (the full list under its own).
  HS_ASSERT_INTERNAL(queue == &heap->full || owner_slow_path_held(heap));
  HS_ASSERT_INTERNAL(page->prev != nullptr ? page->prev->next == page : queue->first == page);
  HS_ASSERT_INTERNAL(page->next != nullptr ? page->next->prev == page : queue->last == page);
  bool was_first = queue->first == page;
  page_set_keep_bias(page, false);
  if (page->prev != nullptr)
    page->prev->next = page->next;
  else
    queue->first = page->next;
  if (page->next != nullptr)
    page->next->prev = page->prev;
  else
    queue->last = page->prev;
  page->next = page->prev = nullptr;
  queue_fix_keep_bias(heap, queue);
  if (was_first && queue != &heap->full) direct_update(heap, page->bin);
}

inline void queue_push(Heap* heap, Page* page, bool front) {
  PageQueue* queue = queue_of(heap, page);
  HS_ASSERT_INTERNAL(queue == &heap->full || owner_slow_path_held(heap));
  if (front) {
    page->prev = nullptr;
    page->next = queue->first;
    if (queue->first != nullptr)
      queue->first->prev = page;
    else
      queue->last = page;
    queue->first = page;
  } else {
    page->next = nullptr;
    page->prev = queue->last;
    if (queue->last != nullptr)
      queue->last->next = page;
    else
      queue->first = page;
    queue->last = page;
  }
  HS_ASSERT_INTERNAL(page->heap == heap && queue->first->prev == nullptr &&
                     queue->last->next == nullptr);
  queue_fix_keep_bias(heap, queue);
  if (queue->first == page && queue != &heap->full) direct_update(heap, page->bin);
}

// Moves a page out of the full list. Only the owner calls this, holding the full-list lock
// (HeapShared::full_lock: other threads may take a full page over, takeover.cc).
inline void unmark_full(Heap* heap, Page* page) {
  queue_remove(heap, page);
  page_flags_clear(page, kPageInFull);
  page->remote_in_full.store(0, std::memory_order_relaxed);
  queue_push(heap, page, false);
}

// Tries to park an exhausted page in the full list; returns false if remote frees raced in.
inline bool mark_full(Heap* heap, Page* page) {
  // Dekker-style handshake with free_remote: publish "in full" first, then look at
  // thread_free; a remote freer pushes first, then looks at the flag. One side always sees
  // the other, so a page is never parked with frees nobody will announce.
  page->remote_in_full.store(1, std::memory_order_seq_cst);
  if (page->thread_free.load(std::memory_order_seq_cst) != nullptr) {
    page->remote_in_full.store(0, std::memory_order_relaxed);
    return false;
  }
  // A full page may be taken over (takeover.cc): it parks with nothing left to fold, so its
  // owner's counts stay with its owner.
  page_fold_counts(page);
  full_list_lock(heap);
  queue_remove(heap, page);
  page_flags_set(page, kPageInFull);
  queue_push(heap, page, false);
  full_list_unlock(heap);
  return true;
}

// A page emptied by a free: back to its segment, or kept when it is the last of its class.
void page_retire(Heap* heap, Page* page);
// A kept page emptied again: runs the purges that fall due meanwhile.
void kept_page_emptied(Heap* heap);
// Brings back full pages that other threads freed into.
void heap_collect_full(Heap* heap);
// Frees the heap's kept large page if it is still empty and alone in its queue.
void heap_release_kept_large(Heap* heap);

}  // namespace heapscope
