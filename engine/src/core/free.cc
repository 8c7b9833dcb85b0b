// The generic free path: every free the fast path (alloc_inline.h, free_impl) does not finish
// itself: frees by other threads, into full, checked, sampled or abandoned pages, huge blocks
// and pointers that are not ours.
//
//   free_impl ──(owner thread, page flags clear)──> push local [alloc_inline.h]
//        └─ free_generic ─> huge | full-page | checked | remote push (+ hint)
#include "core/alloc_inline.h"
#include "core/assert.h"
#include "core/hardening.h"
#include "core/heap.h"
#include "core/huge.h"
#include "core/idle_owner.h"
#include "core/options.h"
#include "core/page_counts.h"
#include "core/page_queue.h"
#include "core/profiler_hooks.h"
#include "core/segment.h"
#include "core/takeover.h"
#include "core/thread.h"
#include "platform/platform.h"

namespace heapscope {

// The frees counted where they are made: of huge blocks, and into the pages of exited
// threads (already folded, page_counts.h). Every other free of a small or medium block is
// counted by the page's owner, as what `used` fell by. Counted on the block's heap when the
// freeing thread owns that heap (so a first-class heap's statistics see its own frees), else
// on the freeing thread's heap: counters are plain per-thread adds, and a thread that only
// frees gets a heap on its first such free rather than a locked global count.
static void count_free(Heap* block_heap, size_t block_size) {
  Heap* heap = block_heap;
  if (heap == nullptr || heap->thread_id != os::thread_id()) heap = tls_heap;
  if (HS_UNLIKELY(heap == &g_empty_heap)) heap = thread_heap_init();
  if (heap != nullptr) {
    heap->counters.free_count.add(1);
    heap->counters.freed_total.add(block_size);
  } else {
    g_counters.dead_free_count.fetch_add(1, std::memory_order_relaxed);
    g_counters.dead_freed.fetch_add(block_size, std::memory_order_relaxed);
  }
}

HS_HOT_TEXT static void free_remote(Page* page, Block* block) {
  Block* head = page->thread_free.load(std::memory_order_relaxed);
  do {
    block_set_next(block, head);
  } while (!page->thread_free.compare_exchange_weak(head, block, std::memory_order_seq_cst,
                                                    std::memory_order_relaxed));
  if (page->remote_in_full.load(std::memory_order_seq_cst) != 0) {
    // Heap structs are never unmapped, so a stale owner only costs a spurious scan. No
    // owner: the page was abandoned after we read its owner; a live thread sweeps for it.
    Heap* owner = __atomic_load_n(&page->heap, __ATOMIC_RELAXED);
    if (owner != nullptr) {
      note_free_into_full(owner, page);
    } else {
      g_abandoned_freed_into.store(true, std::memory_order_release);
    }
    return;
  }
  // Not full: the owner may be idle with this page emptying (idle_owner.cc).
  Heap* owner = __atomic_load_n(&page->heap, __ATOMIC_RELAXED);
  if (owner != nullptr) note_free_into_idle(owner);
}

static bool block_in_list(const Block* list, const Block* block) {
  for (; list != nullptr; list = block_next(list)) {
    if (list == block) return true;
  }
  return false;
}

void check_free(Page* page, void* p, bool owner) {
  uint8_t* start = page->area;
  size_t offset = static_cast<size_t>(static_cast<uint8_t*>(p) - start);
  // The owner may be carving more blocks meanwhile: any value read covers the blocks it handed
  // out before this one could be freed.
  const size_t carved = __atomic_load_n(&page->capacity, __ATOMIC_RELAXED) * page->block_size;
  if ((page_flags(page) & kPageHuge) != 0) {
    if (offset != 0) fatal("heapscope: invalid free of a pointer that is not a block start", p);
    return;  // huge_free tests its own `used`
  }
  if (offset >= carved || !is_block_offset(page, offset)) {
    fatal("heapscope: invalid free of a pointer that is not a block start", p);
  }
  Block* block = static_cast<Block*>(p);
#if HS_HARDENED
  // A live block's first word was zeroed when it was handed out, so unless the program wrote
  // there, only a free block's word decodes to a link into this page.
  Block* link = block_next(block);
  size_t link_offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(link) - start);
  bool looks_free = link == nullptr || (link_offset < carved && is_block_offset(page, link_offset));
  if (!looks_free) return;
  // Only the owner may walk its lists. Another thread trusts the screen: a written word
  // passes it by chance with a probability under 2^-51 (a page's blocks among 2^64).
  if (!owner) fatal("heapscope: double free detected", p);
#endif
  if (owner && (block_in_list(page->free, block) || block_in_list(page->local_free, block) ||
                block_in_list(page->thread_free.load(std::memory_order_acquire), block))) {
    fatal("heapscope: double free detected", p);
  }
}

void free_own_checked(Page* page, void* p) {
  check_free(page, p, true);
  free_to_own_page(page, p);
}

// The owner frees the block of its kept large page (page_retire: the last one-block page of
// a class, kept for the next allocation of that size, as a buffer freed and made again
// wants). Done without the owner's slow-path lock, whose atomic exchange was two thirds of
// such a free: the page stays where it is (alone in its queue, kept), and no other thread
// touches a one-block page of a live owner (the idle-owner sweep passes pages with a flag
// by, takeover takes only pages in the full list). False, changing nothing, for any other.
HS_HOT_TEXT static bool free_into_kept_large(Heap* heap, Page* page, Block* block) {
  if (heap->kept_large != page || page->used != 1) return false;
  const PageQueue* queue = &heap->queues[page->bin];
  if (queue->first != page || queue->last != page) return false;
  block_set_next(block, page->local_free);
  page->local_free = block;
  page_used_decrement(page);  // counted as the fast path's (page_counts.h)
  kept_page_emptied(heap);
  return true;
}

HS_HOT_TEXT void free_generic(Page* page, void* p) {
  if (HS_UNLIKELY(page->block_size == 0)) {
    if (frees_checked()) fatal("heapscope: free of a pointer into unused memory", p);
    warning("heapscope: ignoring free of a pointer into unused memory", p);
    return;
  }
  // Acquire: a 0 read here means the segment's abandoned flag is visible (abandon_segments).
  // One load for the owner and the in-full flag: a page is taken over (takeover.cc) only
  // while in its owner's full list, so an owner that reads itself without the flag keeps it.
  const uintptr_t word = page->owner_word.load(std::memory_order_acquire);
  const uintptr_t owner_tid = word & kOwnerTidMask;
  bool in_full = ((word >> kPageFlagShift) & kPageInFull) != 0;
  bool owner = owner_tid == os::thread_id();
  // Checked before the profiler forgets a sample: a double free must not reach it twice.
  if (HS_HARDENED || (page_flags(page) & kPageChecked) != 0) check_free(page, p, owner);
#if HS_PROFILER
  // A live sample sends every free of its page here for as long as it lives. The owner's
  // frees of the page's other blocks finish as on the fast path after one bitmap test.
  // (Tested inline in free_impl instead, this check cost the fast path an instruction.)
  if (page->owner_word.load(std::memory_order_relaxed) ==
          (os::thread_id() | (uintptr_t{kPageSampled} << kPageFlagShift)) &&
      !page_block_is_sample(page, p)) {
    free_to_own_page(page, p);
    return;
  }
  if (page_flags(page) & kPageSampled) sampled_free(page, p);
#endif
  if (page_flags(page) & kPageHuge) {
    // Heap structs are never unmapped: a stale heap pointer only fails the owner test.
    count_free(__atomic_load_n(&page->heap, __ATOMIC_RELAXED), page->block_size);
    huge_free(page);
    return;
  }
  Block* block = static_cast<Block*>(p);
  if (owner_tid == 0) {
    // A page of an exited thread: freed in place. Normal (not huge) pages live in their
    // segment's header, so the segment is an align-down.
    Segment* segment = segment_of_page(page);
    const size_t block_size = page->block_size;  // the segment may be gone after the free
    if (free_into_abandoned(segment, page, p)) {
      count_free(nullptr, block_size);
      return;
    }
    // A page given back into a live thread's segment (takeover.cc): the freer takes it.
    owner = claim_returned_page(segment, page);
    in_full = false;  // a claimed page joins a queue
  }
  if (!owner) {
    free_remote(page, block);
    return;
  }
  Heap* heap = __atomic_load_n(&page->heap, __ATOMIC_RELAXED);
  HS_ASSERT_INTERNAL(heap->thread_id == os::thread_id());
  if (word == (os::thread_id() | (uintptr_t{kPageLarge} << kPageFlagShift)) &&
      free_into_kept_large(heap, page, block)) {
    return;
  }
  OwnerSlowPath slow_path(heap);  // its pages and queues change below
  // Another thread may take a full page over until the owner holds the full-list lock.
  if (in_full && !unmark_full_if_owner(heap, page)) {
    free_remote(page, block);
    return;
  }
  HS_ASSERT_INTERNAL(page_owner_tid(page) == os::thread_id());
  block_set_next(block, page->local_free);
  page->local_free = block;
  if (--page->used == 0) page_retire(heap, page);  // counted as the fast path's (page_counts.h)
}

HS_HOT_TEXT void free_unusual(void* p) {
  // With memory events compiled in, every free comes here while tracking is on (free_impl).
  if (events_intercept()) return events_free(p);
#if HS_MEMORY_EVENTS
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  // A normal segment's block: a free nested in tracked code, or (rarely) a tag that a
  // segment's registration left while tracking was being switched off; the next switch
  // retags it.
  if ((address >> kAddressBits) == 0 &&
      is_normal_segment_entry(
          g_segment_map[address >> kSegmentShift].load(std::memory_order_relaxed))) {
    free_segment_block(p);
    return;
  }
#endif
  if (p == nullptr) return;
  Segment* segment = segment_of_slow(p);
  if (segment == nullptr) {
    if (frees_checked()) fatal("heapscope: free of a pointer heapscope does not own", p);
    warning("heapscope: ignoring free of a foreign pointer", p);
    return;
  }
  free_generic(&segment->pages[0], p);
}

}  // namespace heapscope
