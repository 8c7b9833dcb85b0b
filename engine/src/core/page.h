// Pages: a span of slices holding blocks of one size class (or one huge block), its flags and
// owner word, and the page set-up and collection of page.cc.
#pragma once

#include <atomic>
#include <cstddef>

#include "core/common.h"
#include "core/size_class.h"

namespace heapscope {

struct Heap;

enum PageFlags : uint8_t {
  kPageInFull = 1,    // page sits in the heap's full list
  kPageChecked = 4,   // double/invalid free checks requested
  kPageHuge = 8,      // a dedicated mapping holding one block
  kPageSampled = 16,  // the profiler sampled a block here (see sample_bits)
  kPageLarge = 32,    // one block per page: frees take the generic path (page_retire decides)
};

// 128 bytes, so pointer -> page is a shift rather than a multiply on the free fast path.
// Two cache lines by writer: the first is the owner's (allocation pops and local frees write
// it), the second is what other threads' frees read and the one word they write
// (thread_free), so a remote free never steals the line the owner's malloc is writing.
struct alignas(128) Page {
  // ---- owner line ----
  Block* free;        // blocks ready for allocation (owner only)
  Block* local_free;  // owner's slow-path frees and collected remote frees
  // Live blocks, including remote frees not yet collected, plus keep_bias: a multi-block page
  // alone in its queue counts one more, so its last free never reaches zero and free's fast
  // path needs no test to keep it (page_live gives the blocks alone).
  uint32_t used;
  uint32_t capacity;  // blocks carved out so far (stored atomically: check_free reads it)
  uint32_t reserved;  // blocks that fit in the page
  uint8_t bin;
  uint8_t keep_bias;  // 1 while `used` carries the alone-in-its-queue bias (page_queue.h)
  // Of every slice, free or not: how many 4 KiB units from its start may be resident (what
  // its pages carved since it was last purged; kept by segment.cc), so that what an emptied
  // segment keeps is bounded by its resident bytes rather than by a count of slices.
  uint8_t resident_units;
  uint8_t last_bin;  // for a free slice: the size class of the page that last started there
  Page* next;
  Page* prev;
  // Statistics without a counter on free's fast path (page_counts.h): blocks handed out since
  // the page's counts were last folded into its heap, and `used` as it stood then, moved along
  // by the keep bias and by frees counted where they were made (into an exited thread's page).
  uint64_t pops;
  uint32_t used_base;
  // Set when allocation found the page without a free block and sent it to the back of its
  // queue rather than into the full list (queue_page_with_block): frees keep reaching it on
  // the fast path until allocation comes round to it again. Cleared when it serves a block.
  uint8_t passed_dry;
  // ---- shared line ----
  alignas(64) std::atomic<Block*> thread_free;  // blocks freed by other threads
  // The owner thread's id (0 when abandoned or huge) in the low bits and the PageFlags in
  // the top byte (kPageFlagShift), so free's fast path tests "mine, and no flag set" with a
  // single compare against the thread pointer. Flags change by atomic RMW: the profiler sets
  // and clears kPageSampled from other threads; use the page_owner/page_flags helpers below.
  std::atomic<uintptr_t> owner_word;
  std::atomic<uint8_t> remote_in_full;  // mirror of kPageInFull for remote freers
  std::atomic<uint8_t> huge_tracked;    // huge page linked in its first-class heap's list
  uint16_t slice_count;                 // slices spanned (0 for a slice that is not a span start)
  uint16_t slice_back;                  // distance to the span's first slice
  size_t block_size;
  uint8_t* area;
  Heap* heap;  // owning heap (nullptr when abandoned); written by the owner, read by others
  // Profiler: one bit per block, set while that block is a live sample (profiler memory),
  // and the number of live samples, under the profiler lock (kPageSampled clears at zero).
  std::atomic<uint64_t*> sample_bits;
  uint32_t sampled_count;
};
static_assert(sizeof(Page) == 128);

HS_ALWAYS_INLINE uint32_t page_live(const Page* page) { return page->used - page->keep_bias; }

// User-space thread pointers (and so thread ids) leave the top byte zero on every 64-bit
// target we run on (x86-64 with 4- or 5-level paging, AArch64); thread_heap_init checks it.
inline constexpr unsigned kPageFlagShift = 56;
inline constexpr uintptr_t kOwnerTidMask = (uintptr_t{1} << kPageFlagShift) - 1;

HS_ALWAYS_INLINE uint8_t page_flags(const Page* page) {
  return static_cast<uint8_t>(page->owner_word.load(std::memory_order_relaxed) >> kPageFlagShift);
}
HS_ALWAYS_INLINE uintptr_t page_owner_tid(const Page* page,
                                          std::memory_order order = std::memory_order_relaxed) {
  return page->owner_word.load(order) & kOwnerTidMask;
}
// Read-modify-write: the profiler sets and clears kPageSampled from other threads.
inline void page_flags_set(Page* page, uint8_t bits,
                           std::memory_order order = std::memory_order_relaxed) {
  page->owner_word.fetch_or(uintptr_t{bits} << kPageFlagShift, order);
}
inline void page_flags_clear(Page* page, uint8_t bits) {
  page->owner_word.fetch_and(~(uintptr_t{bits} << kPageFlagShift), std::memory_order_relaxed);
}
// A huge mapping or a one-block page (large, growth span, a sample's own page): the profiler
// needs no bitmap there, the page's flag says it all.
HS_ALWAYS_INLINE bool page_holds_one_block(const Page* page) {
  return (page_flags(page) & (kPageHuge | kPageLarge)) != 0;
}

// Sets the owner, keeping the flags (which another thread may be changing meanwhile).
inline void page_set_owner(Page* page, uintptr_t tid, std::memory_order order) {
  uintptr_t word = page->owner_word.load(std::memory_order_relaxed);
  while (!page->owner_word.compare_exchange_weak(word, (word & ~kOwnerTidMask) | tid, order,
                                                 std::memory_order_relaxed)) {
  }
}
// A page nobody else can see yet (being set up or torn down): owner and flags in one store.
inline void page_init_owner(Page* page, uintptr_t tid, uint8_t flags) {
  page->owner_word.store(tid | (uintptr_t{flags} << kPageFlagShift), std::memory_order_relaxed);
}

struct PageQueue {
  Page* first = nullptr;
  Page* last = nullptr;
};

// The page of no size class: every direct-table slot of a heap that has no page there yet.
extern Page g_empty_page;

// one_block: a single block however many would fit (a growth span, see malloc_one_block_page).
void page_init(Page* page, Heap* heap, size_t bin, bool one_block = false);
bool page_extend(Page* page);       // carve more blocks out of the page; false if none left
uint32_t page_collect(Page* page);  // merge local and remote frees; returns remote count
Block* block_start(const Page* page, const void* p);

}  // namespace heapscope
