// Heaps: page queues per size class, the generic (slow) malloc and free paths, page
// retirement, and first-class heap migration/destruction.
//
//   malloc_impl ──(direct page has a block)──> pop            [alloc_inline.h]
//        └─ malloc_generic ─> find_page ─> collect / extend / full list / fresh page
//   free_impl ──(owner thread, page flags clear)──> push local [alloc_inline.h]
//        └─ free_generic ─> huge | full-page | checked | remote push (+ hint)
#include <string.h>

#include "core/alloc_inline.h"
#include "internal.h"
#include "platform/platform.h"

namespace heapscope {

// ---- queues and the direct table -------------------------------------------------------------
static void direct_update(Heap* heap, size_t bin) {
  size_t block_size = bin_block_size(bin);
  if (block_size > kMediumBlockMax) return;
  Page* page = heap->queues[bin].first;
  if (page == nullptr) page = &g_empty_page;
  // The slots of the sizes this class serves: above the previous class, up to its own.
  size_t below = bin == 1 ? 0 : bin_block_size(bin - 1);
  bool small = block_size <= kSmallDirectMax;
  size_t step = small ? kMinAlign : kMediumDirectStep;
  Page** table = small ? heap->direct.slots : heap->direct.medium;
  size_t low = bin == 1 ? 0 : below / step + 1;
  for (size_t slot = low; slot <= block_size / step; ++slot) table[slot] = page;
}

static PageQueue* queue_of(Heap* heap, const Page* page) {
  return (page_flags(page) & kPageInFull) != 0 ? &heap->full : &heap->queues[page->bin];
}

// The keep bias (Page::used): only multi-block pages take it; one-block pages (large blocks,
// growth spans) reach page_retire through free's generic path, which keeps them itself.
void page_set_keep_bias(Page* page, bool on) {
  if (page->keep_bias == (on ? 1 : 0)) return;
  page->used = on ? page->used + 1 : page->used - 1;
  page->keep_bias = on ? 1 : 0;
}

// After every change of a (not full) queue: its page has the bias exactly when it is alone.
static void queue_fix_keep_bias(Heap* heap, PageQueue* queue) {
  Page* first = queue->first;
  if (queue == &heap->full || first == nullptr) return;
  bool alone = first == queue->last;
  page_set_keep_bias(first, alone && first->reserved > 1);
  if (!alone) page_set_keep_bias(queue->last, false);
}

static void queue_remove(Heap* heap, Page* page) {
  PageQueue* queue = queue_of(heap, page);
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

static void queue_push(Heap* heap, Page* page, bool front) {
  PageQueue* queue = queue_of(heap, page);
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
  queue_fix_keep_bias(heap, queue);
  if (queue->first == page && queue != &heap->full) direct_update(heap, page->bin);
}

// Moves a page out of the full list. Only the owner calls this.
static void unmark_full(Heap* heap, Page* page) {
  queue_remove(heap, page);
  page_flags_clear(page, kPageInFull);
  page->remote_in_full.store(0, std::memory_order_relaxed);
  queue_push(heap, page, false);
}

// Tries to park an exhausted page in the full list; returns false if remote frees raced in.
static bool mark_full(Heap* heap, Page* page) {
  // Dekker-style handshake with free_remote: publish "in full" first, then look at
  // thread_free; a remote freer pushes first, then looks at the flag. One side always sees
  // the other, so a page is never parked with frees nobody will announce.
  page->remote_in_full.store(1, std::memory_order_seq_cst);
  if (page->thread_free.load(std::memory_order_seq_cst) != nullptr) {
    page->remote_in_full.store(0, std::memory_order_relaxed);
    return false;
  }
  queue_remove(heap, page);
  page_flags_set(page, kPageInFull);
  queue_push(heap, page, false);
  return true;
}

void page_retire(Heap* heap, Page* page) {
  PageQueue* queue = &heap->queues[page->bin];
  // Keep the last page of a class: a program freeing and reallocating one block must not
  // map and unmap a page each time. The next purge round frees it if it is still empty.
  if (queue->first == page && queue->last == page) {
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
    // A loop that mallocs and frees one block never reaches the allocation slow path, so due
    // purges are run from here too (the clock is read once per 16 such frees).
    ThreadData* td = heap->td;
    purge_schedule(td);
    if ((++td->kept_page_frees & 15) == 0) purge_due(td, false);
    return;
  }
  queue_remove(heap, page);
  span_free(heap->td, page);
}

// Brings back full pages that other threads freed into.
static void heap_collect_full(Heap* heap) {
  Page* page = heap->full.first;
  while (page != nullptr) {
    Page* next = page->next;
    if (page->thread_free.load(std::memory_order_relaxed) != nullptr) {
      page_collect(page);
      unmark_full(heap, page);
      if (page_live(page) == 0) page_retire(heap, page);
    }
    page = next;
  }
}

static Page* page_fresh(Heap* heap, size_t bin) {
  Page* page = span_alloc(heap->td, bin_page_slices(bin));
  if (page == nullptr) return nullptr;
  page_init(page, heap, bin);
  page_extend(page);
  queue_push(heap, page, true);
  return page;
}

static Page* find_page(Heap* heap, size_t bin) {
  // Sizes above the direct tables land here on every call: serve them straight from the
  // queue's first page when it has a block, before any housekeeping.
  Page* first = heap->queues[bin].first;
  if (first != nullptr && page_ready_block(first) != nullptr) return first;
  if (heap->remote_hint.load(std::memory_order_relaxed) &&
      heap->remote_hint.exchange(false, std::memory_order_acquire)) {
    heap_collect_full(heap);
  }
  if (HS_UNLIKELY(g_abandoned_freed_into.load(std::memory_order_relaxed))) {
    reclaim_freed_into(heap->td);
  }
  purge_due(heap->td, false);
  PageQueue* queue = &heap->queues[bin];
  Page* page = queue->first;
  while (page != nullptr) {
    Page* next = page->next;
    if (page->free == nullptr) page_collect(page);
    if (page->free == nullptr) page_extend(page);
    if (page->free != nullptr) {
      if (page != queue->first) {
        queue_remove(heap, page);
        queue_push(heap, page, true);
      }
      return page;
    }
    if (!mark_full(heap, page)) continue;  // remote frees arrived: collect them next round
    page = next;
  }
  return page_fresh(heap, bin);
}

// The fast path's countdown crossed zero (only with the profiler compiled in).
HS_TEXT HS_NOINLINE void* malloc_sampled(Heap* heap, size_t size) {
#if HS_PROFILER
  bool sample = sample_countdown_expired(heap, size);
  if (!sample && size <= kMediumBlockMax) {
    // Mostly the idle re-check of a stopped profiler (every kIdleRecheckBytes): finish as the
    // fast path would have, not through the generic path.
    Page* page = direct_page(heap, size);
    if (Block* block = page_ready_block(page)) return page_pop_charged(heap, page, block, size);
  }
  void* p = nullptr;
  if (sample && size <= kSampleOwnPageMaxSize && heap->prof_interval >= kSampleOwnPageMinInterval) {
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
  countdown_shift(heap, static_cast<int64_t>(size));
#else
  (void)heap;
  (void)size;
#endif
}

HS_TEXT HS_NOINLINE void* malloc_generic(Heap* heap, size_t size, bool count_sample) {
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
#if HS_PROFILER
  if (count_sample && HS_UNLIKELY((heap->sample_countdown -= static_cast<int64_t>(size)) < 0) &&
      sample_countdown_expired(heap, size)) {
    // A tail call would lose this frame's return address, which the stack walk needs.
    void* p = malloc_generic(heap, size, false);
    if (p != nullptr) record_sample(heap, p, size);
    return p;
  }
#else
  (void)count_sample;
#endif
  if (size > kLargeMax) {
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
  return page_pop_charged(heap, page, page->free, size);
}

// ---- free --------------------------------------------------------------------------------------
// Frees are counted by the freeing thread. A thread that only frees (a consumer) gets a heap
// on its first free, so its counting stays a plain add instead of a locked global one.
static void count_free(size_t block_size) {
  Heap* heap = tls_heap;
  if (HS_UNLIKELY(heap == &g_empty_heap)) heap = thread_heap_init();
  if (heap != nullptr) {
    heap->counters.free_count.add(1);
    heap->counters.freed_total.add(block_size);
  } else {
    g_counters.dead_free_count.fetch_add(1, std::memory_order_relaxed);
    g_counters.dead_freed.fetch_add(block_size, std::memory_order_relaxed);
  }
}

static void free_remote(Page* page, Block* block) {
  Block* head = page->thread_free.load(std::memory_order_relaxed);
  do {
    block->next = head;
  } while (!page->thread_free.compare_exchange_weak(head, block, std::memory_order_seq_cst,
                                                    std::memory_order_relaxed));
  if (page->remote_in_full.load(std::memory_order_seq_cst) != 0) {
    // Heap structs are never unmapped, so a stale owner only costs a spurious scan. No
    // owner: the page was abandoned after we read its owner; a live thread sweeps for it.
    Heap* owner = __atomic_load_n(&page->heap, __ATOMIC_RELAXED);
    if (owner != nullptr) {
      owner->remote_hint.store(true, std::memory_order_release);
    } else {
      g_abandoned_freed_into.store(true, std::memory_order_release);
    }
  }
}

static bool block_in_list(const Block* list, const Block* block) {
  for (; list != nullptr; list = list->next) {
    if (list == block) return true;
  }
  return false;
}

static void check_free(Page* page, void* p, bool owner) {
  uint8_t* start = page->area;
  size_t offset = static_cast<size_t>(static_cast<uint8_t*>(p) - start);
  if (offset % page->block_size != 0 || offset / page->block_size >= page->capacity) {
    fatal("heapscope: invalid free of a pointer that is not a block start", p);
  }
  Block* block = static_cast<Block*>(p);
  if (owner && (block_in_list(page->free, block) || block_in_list(page->local_free, block))) {
    fatal("heapscope: double free detected", p);
  }
}

void free_generic(Page* page, void* p) {
  if (HS_UNLIKELY(page->block_size == 0)) {
    if (option(hs_option_check_frees) != 0)
      fatal("heapscope: free of a pointer into unused memory", p);
    warning("heapscope: ignoring free of a pointer into unused memory", p);
    return;
  }
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
    count_free(page->block_size);
    huge_free(page);
    return;
  }
  // Acquire: a 0 read here means the segment's abandoned flag is visible (abandon_segments).
  uintptr_t owner_tid = page_owner_tid(page, std::memory_order_acquire);
  bool owner = owner_tid == os::thread_id();
  // A page of an exited thread: take its segment over first, then free as its owner.
  // Normal (not huge) pages live in their segment's header, so the segment is an align-down.
  if (owner_tid == 0 && reclaim_segment_on_free(reinterpret_cast<Segment*>(
                            reinterpret_cast<uintptr_t>(page) & ~kSegmentMask))) {
    owner = true;
  }
  if (page_flags(page) & kPageChecked) check_free(page, p, owner);
  Block* block = static_cast<Block*>(p);
  count_free(page->block_size);
  if (!owner) {
    free_remote(page, block);
    return;
  }
  Heap* heap = page->heap;
  if (page_flags(page) & kPageInFull) unmark_full(heap, page);
  block->next = page->local_free;
  page->local_free = block;
  if (--page->used == 0) page_retire(heap, page);
}

void free_unusual(void* p) {
  if (p == nullptr) return;
  Segment* segment = segment_of_slow(p);
  if (segment == nullptr) {
    if (option(hs_option_check_frees) != 0)
      fatal("heapscope: free of a pointer heapscope does not own", p);
    warning("heapscope: ignoring free of a foreign pointer", p);
    return;
  }
  free_generic(&segment->pages[0], p);
}

// ---- heaps
// ---------------------------------------------------------------------------------------
void heap_init(Heap* heap, ThreadData* td, bool is_default) {
  heap->td = td;
  heap->is_default = is_default;
  heap->thread_id = os::thread_id();
  // Page::owner_word keeps the flags above the id (internal.h).
  if (HS_UNLIKELY((heap->thread_id & ~kOwnerTidMask) != 0)) {
    fatal("thread pointer uses the top byte; page owner words cannot hold it",
          reinterpret_cast<void*>(heap->thread_id));
  }
#if HS_PROFILER
  prof_heap_init(heap);
#endif
}

// realloc/hs_expand of a one-block (large) page's block by the owning thread: when the slices
// right after the span are free, the span takes them and the page moves to the bigger class,
// so nothing is copied. Accounted as a moving realloc (a free and an allocation; the caller
// charges the profiler). False, changing nothing, when the block cannot grow where it is.
bool large_grow_in_place(Page* page, size_t new_size) {
  if ((page_flags(page) & kPageLarge) == 0 || new_size > kLargeMax) return false;
  if (page_owner_tid(page) != os::thread_id()) return false;
  size_t bin = bin_of(new_size);
  if (bin_block_size(bin) <= page->block_size) return false;
  size_t slices = (bin_block_size(bin) + kSliceSize - 1) / kSliceSize;
  Heap* heap = page->heap;
  size_t old_block = page->block_size;
  // The page leaves its queue under its old class (or stays in the full list).
  bool in_full = (page_flags(page) & kPageInFull) != 0;
  if (!in_full) queue_remove(heap, page);
  // A class that still fits the span (a growth span, or a large class that leaves part of its
  // last slice unused) only changes the page's class.
  if (slices > page->slice_count && !span_grow(heap->td, page, slices)) {
    if (!in_full) queue_push(heap, page, false);
    return false;
  }
#if HS_PROFILER
  if (page_flags(page) & kPageSampled) sampled_free(page, page->area);
#endif
  page->bin = static_cast<uint8_t>(bin);
  page->block_size = bin_block_size(bin);
  if (!in_full) queue_push(heap, page, false);
  heap->counters.free_count.add(1);
  heap->counters.freed_total.add(old_block);
  heap->counters.alloc_count.add(1);
  heap->counters.allocated_total.add(page->block_size);
#if !HS_PROFILER
  heap->counters.requested_bytes.add(new_size);
#endif
  return true;
}

// A block of up to kMediumBlockMax on a page of its own (one slice, the owner thread's): the
// block of a growing realloc (kGrowthSpanMin and up), so it can grow in place
// (large_grow_in_place) through 64 KiB and beyond; and a sampled small block (malloc_sampled).
// The profiler is charged by the caller. nullptr when no slice is to be had (use the classes).
void* malloc_one_block_page(Heap* heap, size_t size) {
  size_t bin = bin_of(size);
  Page* page = span_alloc(heap->td, 1);
  if (page == nullptr) return nullptr;
  page_init(page, heap, bin, true);
  page_extend(page);
  // At the back of its queue: the direct table keeps pointing at a shared page of the class.
  queue_push(heap, page, false);
  // (With the profiler compiled in, the caller's charge_sample counts the requested bytes.)
  return page_pop_charged(heap, page, page->free, size);
}

void heap_adopt_page(Heap* heap, Page* page) {
  page_flags_clear(page, kPageInFull);
  page->remote_in_full.store(0, std::memory_order_relaxed);
  __atomic_store_n(&page->heap, heap, __ATOMIC_RELAXED);
  page_set_owner(page, heap->thread_id, std::memory_order_release);
  queue_push(heap, page, false);
}

template <typename Fn>
static void for_each_page(Heap* heap, Fn&& fn) {
  for (size_t bin = 0; bin <= kBinCount; ++bin) {
    PageQueue* queue = bin == kBinCount ? &heap->full : &heap->queues[bin];
    Page* page = queue->first;
    while (page != nullptr) {
      Page* next = page->next;
      fn(page);
      page = next;
    }
  }
}

// The page page_retire kept for a class stays only while the class is in use: at a purge
// round an empty one goes back to its segment (reused without faults until it is purged).
void heap_release_idle_pages(Heap* heap) {
  for (size_t bin = 1; bin < kBinCount; ++bin) {
    Page* page = heap->queues[bin].first;
    if (page == nullptr || page != heap->queues[bin].last || page_live(page) != 0) continue;
    if (page->thread_free.load(std::memory_order_relaxed) != nullptr) continue;
    queue_remove(heap, page);
    span_free(heap->td, page);
  }
}

void heap_release_all(Heap* heap) {
  for_each_page(heap, [heap](Page* page) {
    page_collect(page);
    if (page_live(page) == 0) {
      queue_remove(heap, page);
      span_free(heap->td, page);
    }
  });
}

void heap_delete_migrate(Heap* heap) {
  Heap* target = heap->td->default_heap;
  for_each_page(heap, [heap, target](Page* page) {
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
  for_each_page(heap, [heap](Page* page) {
    page_collect(page);  // remote frees were counted by the threads that made them
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
