// Taking over an idle owner's full pages (takeover.cc), and the lock on a heap's full list
// that makes it safe.
#pragma once

#include "core/heap.h"
#include "core/page.h"
#include "core/spin_lock.h"

namespace heapscope {

// The owner's changes to its full list and a taker's removal of a page from it.
inline void full_list_lock(const Heap* heap) { spin_lock(heap_shared(heap)->full_lock); }
inline void full_list_unlock(const Heap* heap) { spin_unlock(heap_shared(heap)->full_lock); }

// Calls fn(page) for every page of the heap, the full list under its lock (another thread may
// take a page out of it); fn may move or free the page it is given.
// Inlined: its copies for lambdas have no section of their own that the shared libraries'
// link could place with the code every program runs (hot_text.ld), and two of them run at
// every thread's exit.
template <typename Fn>
HS_ALWAYS_INLINE void heap_for_each_page(Heap* heap, Fn&& fn) {
  for (size_t bin = 0; bin <= kBinCount; ++bin) {
    const bool full = bin == kBinCount;
    PageQueue* queue = full ? &heap->full : &heap->queues[bin];
    if (full) full_list_lock(heap);
    Page* page = queue->first;
    while (page != nullptr) {
      Page* next = page->next;
      fn(page);
      page = next;
    }
    if (full) full_list_unlock(heap);
  }
}

// A thread's default heap lets other threads take its full pages from its creation until
// its exit starts tearing its lists down (first-class heaps never do).
void takeover_open(Heap* heap, bool open);
// A remote free landed in a full page of `owner` (free_remote): announce it to the owner,
// and take the page over when the owner has left such announcements unanswered too long.
void note_free_into_full(Heap* owner, Page* page);
// The owner's free into a page it saw in its full list: moves the page back to its queue
// and returns true, or returns false when another thread took the page over meanwhile (the
// free is then a remote one).
bool unmark_full_if_owner(Heap* heap, Page* page);
// A page in another thread's segment joined td's default heap (taken or claimed).
void note_foreign_page(ThreadData* td);
// A purge round: collects the remote frees in pages the heap holds in other threads'
// segments and gives back those left empty (a page taken over is not kept when it empties).
void heap_collect_foreign(Heap* heap);
// Thread exit: pages the heap took over from other threads' segments go back to them.
void heap_return_taken(Heap* heap);

}  // namespace heapscope
