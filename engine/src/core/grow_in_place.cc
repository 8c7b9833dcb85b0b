// Growth in place: a one-block page's block grows over the free slices after its span, so a
// growing realloc copies nothing; and the one-block pages such blocks start on.
#include "core/alloc_inline.h"
#include "core/heap.h"
#include "core/idle_owner.h"
#include "core/page_counts.h"
#include "core/page_queue.h"
#include "core/profiler_hooks.h"
#include "core/segment.h"
#include "platform/platform.h"

namespace heapscope {

// realloc/hs_expand of a one-block (large) page's block by the owning thread: when the slices
// right after the span are free, the span takes them and the page moves to the bigger class,
// so nothing is copied. Accounted as a moving realloc (a free and an allocation; the caller
// charges the profiler). False, changing nothing, when the block cannot grow where it is.
HS_HOT_TEXT bool large_grow_in_place(Page* page, size_t new_size) {
  if ((page_flags(page) & kPageLarge) == 0 || new_size > kHugeMin) return false;
  if (page_owner_tid(page) != os::thread_id()) return false;
  size_t bin = bin_of(new_size);
  if (bin_block_size(bin) <= page->block_size) return false;
  size_t slices = (bin_block_size(bin) + kSliceSize - 1) / kSliceSize;
  Heap* heap = page->heap;
  OwnerSlowPath slow_path(heap);
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
  page_fold_counts(page);  // its counts so far are its old class's
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
HS_HOT_TEXT void* malloc_one_block_page(Heap* heap, size_t size) {
  size_t bin = bin_of(size);
  OwnerSlowPath slow_path(heap);
  Page* page = span_alloc(heap->td, 1, 0);
  if (page == nullptr) return nullptr;
  page_init(page, heap, bin, true);
  page_extend(page);
  // At the back of its queue: the direct table keeps pointing at a shared page of the class.
  queue_push(heap, page, false);
  // (With the profiler compiled in, the caller's charge_sample counts the requested bytes.)
  return page_pop_charged(heap, page, page->free, size);
}

}  // namespace heapscope
