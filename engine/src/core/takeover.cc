// Taking over an idle owner's full pages.
//
// Blocks other threads free into a page wait in its remote list until the page's owner
// collects them, on its slow paths. An owner that stops calling the allocator (a thread that
// built a data structure for others and now sleeps, or blocks on I/O) never does: the pages
// whose blocks the others free stay resident, and the freeing threads fault fresh pages in
// for the same sizes. So when a remote free lands in a *full* page and its owner has left
// the announcement of such frees (Heap::remote_hint) unanswered for kIdleOwnerMs, the
// freeing thread takes that page over: it becomes the page's owner, the page joins its
// default heap's queue, and its own allocations reuse the page's free blocks.
//
// Only full pages move. The owner's fast paths never touch them (allocation pops from
// queue pages; a free into a full page takes the generic path), so a lock on the full list
// (HeapShared::full_lock), taken by the owner around its full-list changes and by the taker,
// is all the exclusion needed; the owner's free into a page it saw in that list re-checks
// its ownership under the lock. The page's slices stay in their segment, which still belongs
// to its owner: when the taker empties the page or exits, the page goes back
// (return_taken_page, thread.cc).
#include "core/takeover.h"

#include "core/idle_owner.h"
#include "core/page_queue.h"
#include "core/segment.h"
#include "core/thread.h"
#include "platform/platform.h"
#include "platform/thread_local.h"

namespace heapscope {

namespace {

// How long an owner may leave remote frees into its full pages unannounced before other
// threads take those pages: far beyond the gap between two slow paths of a thread that is
// allocating, so only a thread that stopped calling the allocator loses pages (losing one
// costs it nothing but the page's later return).
constexpr int64_t kIdleOwnerMs = 50;
// The clock is read once per this many frees into an unanswering owner's full pages.
constexpr uint32_t kIdleCheckEvery = 16;

HS_THREAD_LOCAL(uint32_t, t_unanswered_frees, 0);

HS_HOT_TEXT void take_full_page(Heap* owner, Page* page) {
  Heap* taker = tls_heap;
  if (HS_HARDENED || taker == &g_empty_heap || taker == owner) return;
  // This thread's own heap is being torn down: it must not gain pages now.
  if (heap_shared(taker)->takeover_tid.load(std::memory_order_relaxed) == 0) return;
  HeapShared* shared = heap_shared(owner);
  if (!spin_try_lock(shared->full_lock)) return;  // the owner is busy with it: not idle
  // Exactly "owned by the heap's thread, in its full list, no other flag": a checked,
  // sampled or one-block page stays where it is. The heap pointer may be stale (the slot was
  // reused), which the owner id under the lock rules out.
  const uintptr_t tid = shared->takeover_tid.load(std::memory_order_relaxed);
  constexpr uintptr_t kInFull = uintptr_t{kPageInFull} << kPageFlagShift;
  uintptr_t expected = tid | kInFull;
  const bool taken = tid != 0 && __atomic_load_n(&page->heap, __ATOMIC_RELAXED) == owner &&
                     page->owner_word.compare_exchange_strong(expected, taker->thread_id | kInFull,
                                                              std::memory_order_acq_rel,
                                                              std::memory_order_relaxed);
  if (taken) queue_remove(owner, page);
  spin_unlock(shared->full_lock);
  if (!taken) return;
  OwnerSlowPath slow_path(taker);  // the page joins its queues
  __atomic_store_n(&page->heap, taker, __ATOMIC_RELAXED);
  page_flags_clear(page, kPageInFull);
  page->remote_in_full.store(0, std::memory_order_relaxed);
  page_collect(page);
  queue_push(taker, page, true);  // the next allocations of its class reuse its blocks
  note_foreign_page(taker->td);
  g_counters.pages_taken_over.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

HS_HOT_TEXT void note_foreign_page(ThreadData* td) {
  ++td->foreign_pages;
  purge_schedule(td);
}

HS_HOT_TEXT void heap_collect_foreign(Heap* heap) {
  ThreadData* td = heap->td;
  if (td->foreign_pages == 0) return;
  uint32_t held = 0;
  auto collect = [heap, td, &held](Page* page) {
    if (segment_owner(segment_of_page(page)) == td) return;
    ++held;
    if (page_collect(page) != 0 && (page_flags(page) & kPageInFull) != 0) unmark_full(heap, page);
    if (page_live(page) == 0) {
      queue_remove(heap, page);
      span_free(td, page);  // gives it back
      --held;
    }
  };
  // The full list first: its pages move to the queues walked after it. Its lock may be held
  // (by this thread, when a purge round runs inside a full-list walk, or by a taker for a
  // moment): the round then leaves the full list to the next one.
  HeapShared* shared = heap_shared(heap);
  const bool full_walked = spin_try_lock(shared->full_lock);
  if (full_walked) {
    for (Page* page = heap->full.first; page != nullptr;) {
      Page* next = page->next;
      collect(page);
      page = next;
    }
    spin_unlock(shared->full_lock);
  }
  for (size_t bin = 0; bin < kBinCount; ++bin) {
    for (Page* page = heap->queues[bin].first; page != nullptr;) {
      Page* next = page->next;
      collect(page);
      page = next;
    }
  }
  if (full_walked) td->foreign_pages = held;  // purge_due schedules the next round
}

void takeover_open(Heap* heap, bool open) {
  HeapShared* shared = heap_shared(heap);
  spin_lock(shared->full_lock);
  shared->takeover_tid.store(open ? heap->thread_id : 0, std::memory_order_relaxed);
  spin_unlock(shared->full_lock);
}

HS_HOT_TEXT void note_free_into_full(Heap* owner, Page* page) {
  // Raised already: the owner has yet to lower it, and the scan that follows its lowering
  // sees this page's frees (see remote_hint). Storing it again on every such free would take
  // the owner's line from it each time (xmalloc-test ran 7-8% longer).
  if (!owner->remote_hint.load(std::memory_order_seq_cst)) {
    heap_shared(owner)->hint_raised_ms.store(os::now_ms(), std::memory_order_relaxed);
    owner->remote_hint.store(true, std::memory_order_seq_cst);
    return;
  }
  if (++t_unanswered_frees % kIdleCheckEvery != 0) return;
  const int64_t raised = heap_shared(owner)->hint_raised_ms.load(std::memory_order_relaxed);
  if (os::now_ms() - raised < kIdleOwnerMs) return;
  take_full_page(owner, page);
}

HS_HOT_TEXT bool unmark_full_if_owner(Heap* heap, Page* page) {
  full_list_lock(heap);
  const bool mine = page_owner_tid(page, std::memory_order_acquire) == heap->thread_id;
  if (mine) unmark_full(heap, page);
  full_list_unlock(heap);
  return mine;
}

}  // namespace heapscope
