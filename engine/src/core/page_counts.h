// A page's share of its heap's per-class statistics. Counting each malloc and free in the
// heap's counters put a read-modify-write of another cache line, found through page->heap,
// on both fast paths; instead malloc counts on the page's owner line, which it writes
// anyway, and free counts nothing: the frees of a page since its last fold are the blocks
// handed out minus what `used` grew by,
//
//   frees = pops - (used - used_base),
//
// whoever made them: the owner's own (fast or slow path) and the remote frees it collected.
// Every other change of `used` moves used_base with it (page_uncount_frees, the keep bias):
// frees into an exited thread's pages, counted where they are made. The owner folds a page
// into its heap's per-class counters whenever the page parks in the full list, changes hands
// or class, or is freed; its first pages at each purge round; and all its pages, remote frees
// collected first, when it reads its own statistics or ends. So each page's folded counts
// describe it as it was at its last fold (never fewer allocations than frees), and another
// live thread's statistics lag by what happened on its pages since.
#pragma once

#include <cstdint>

#include "core/assert.h"
#include "core/common.h"
#include "core/heap.h"
#include "core/page.h"
#include "core/stats.h"

namespace heapscope {

// A block handed out by the owner (page_pop_charged).
HS_ALWAYS_INLINE void page_count_pop(Page* page) { page->pops++; }

// `used` falls by `count` blocks whose frees were counted where they were made.
HS_ALWAYS_INLINE void page_uncount_frees(Page* page, uint32_t count) {
  page->used -= count;
  page->used_base -= count;
}

// Remote frees collected from a page without an owner (an exited thread's, folded when it
// ended): counted with the exited threads' counts.
inline void page_count_ownerless_frees(Page* page, uint32_t count) {
  page->used_base -= count;
  g_counters.dead_free_count.fetch_add(count, std::memory_order_relaxed);
  g_counters.dead_freed.fetch_add(uint64_t{count} * page->block_size, std::memory_order_relaxed);
}

// The owner of the page's heap (or a thread with the page to itself) moves the page's
// pending counts into the heap's per-class counters.
inline void page_fold_counts(Page* page) {
  const uint64_t pops = page->pops;
  // Modular: used_base may sit above or below used; their distance is below 2^31.
  const int64_t grown = static_cast<int32_t>(page->used - page->used_base);
  if (pops == 0 && grown == 0) return;
  HS_ASSERT_INTERNAL(page->heap != nullptr && grown <= static_cast<int64_t>(pops));
  HeapCounters& counters = page->heap->counters;
  counters.bin_allocs[page->bin].add(pops);
  counters.bin_frees[page->bin].add(static_cast<uint64_t>(static_cast<int64_t>(pops) - grown));
  page->pops = 0;
  page->used_base = page->used;
}

// Every page of a heap its owner holds (statistics read, heap end).
void heap_fold_counts(Heap* heap);

}  // namespace heapscope
