// Pages: set-up, lazy carving of blocks, and collection of frees.
//
// A page has three free lists: `free` feeds allocation and takes the owner's fast-path frees
// (LIFO, so a freed block is reused while still in cache), `local_free` takes the owner's
// slow-path frees and collected remote ones, and `thread_free` (atomic) takes other threads'
// frees. The owner merges the latter two into `free` only when `free` runs dry, so remote
// freers never touch the lists the owner's fast paths use.
#include "core/page.h"

#include "core/assert.h"
#include "core/hardening.h"
#include "core/heap.h"
#include "core/options.h"
#include "core/page_counts.h"
#include "core/segment.h"
#include "core/stats.h"

namespace heapscope {

#if HS_DEBUG >= 2
static uint32_t list_length(const Block* list) {
  uint32_t n = 0;
  for (; list != nullptr; list = block_next(list)) ++n;
  return n;
}

// Every block carved out is live (counted in `used`, with remote frees not yet collected) or
// on one of the owner's two lists.
static bool page_counts_agree(const Page* page) {
  return page_live(page) + list_length(page->free) + list_length(page->local_free) ==
         page->capacity;
}
#endif

HS_HOT_TEXT void page_init(Page* page, Heap* heap, size_t bin, bool one_block) {
  HS_ASSERT_INTERNAL(bin >= 1 && bin < kBinCount);
  size_t block_size = bin_block_size(bin);
  page->block_size = block_size;
  page->bin = static_cast<uint8_t>(bin);
  page->reserved =
      one_block ? 1 : static_cast<uint32_t>(page->slice_count * kSliceSize / block_size);
  page->capacity = 0;
  page->used = 0;
  page->used_base = 0;
  page->pops = 0;
  page->keep_bias = 0;
  page->passed_dry = 0;
  page->free = nullptr;
  page->local_free = nullptr;
  // The hardened build checks every free without the flag (the owner's inline, alloc_inline.h).
  uint8_t flags = option(hs_option_check_frees) != 0 ? kPageChecked : 0;
  if (page->reserved == 1) flags |= kPageLarge;
  __atomic_store_n(&page->heap, heap, __ATOMIC_RELAXED);
  page->thread_free.store(nullptr, std::memory_order_relaxed);
  page->remote_in_full.store(0, std::memory_order_relaxed);
  page_init_owner(page, heap->thread_id, flags);
  HS_ASSERT_INTERNAL(page->reserved >= 1 &&
                     page->reserved * block_size <= page->slice_count * kSliceSize);
}

HS_HOT_TEXT bool page_extend(Page* page) {
  if (page->capacity >= page->reserved) return false;
  // Carve about one OS page worth of blocks at a time: a fresh page does not become resident
  // all at once, and the list stays in address order (random in the hardened build).
  size_t count = 4096 / page->block_size;
  if (count == 0) count = 1;
  size_t left = page->reserved - page->capacity;
  if (count > left) count = left;
  uint8_t* first = page->area + page->capacity * page->block_size;
  page->free = link_carved_blocks(first, count, page->block_size, page->free);
  // Atomic (a plain store on x86-64 and AArch64): check_free reads it from freeing threads.
  __atomic_store_n(&page->capacity, page->capacity + static_cast<uint32_t>(count),
                   __ATOMIC_RELAXED);
  HS_ASSERT_INTERNAL(page->capacity <= page->reserved);
  return true;
}

HS_HOT_TEXT uint32_t page_collect(Page* page) {
  uint32_t remote = 0;
  if (page->thread_free.load(std::memory_order_relaxed) != nullptr) {
    Block* list = page->thread_free.exchange(nullptr, std::memory_order_acquire);
    if (list != nullptr) {
      Block* tail = list;
      remote = 1;
#if HS_HARDENED
      const size_t carved_bytes = page->capacity * page->block_size;
      if (!link_in_page(list, page->area, carved_bytes)) corrupted_free_list(list);
#endif
      for (Block* next = block_next(tail); next != nullptr; next = block_next(tail)) {
#if HS_HARDENED
        if (!link_in_page(next, page->area, carved_bytes)) corrupted_free_list(tail);
#endif
        tail = next;
        ++remote;
      }
      block_set_next(tail, page->local_free);
      page->local_free = list;
      HS_ASSERT_INTERNAL(page_live(page) >= remote);
      page->used -= remote;  // counted by the owner's next fold (page_counts.h)
    }
  }
  if (page->free == nullptr) {
    page->free = page->local_free;
    page->local_free = nullptr;
  }
  HS_ASSERT_EXPENSIVE(page_counts_agree(page));
  return remote;
}

HS_HOT_TEXT Block* block_start(const Page* page, const void* p) {
  size_t offset = static_cast<size_t>(static_cast<const uint8_t*>(p) - page->area);
  return reinterpret_cast<Block*>(page->area + offset / page->block_size * page->block_size);
}

}  // namespace heapscope
