// Pages: set-up, lazy carving of blocks, and collection of frees.
//
// A page has three free lists: `free` feeds allocation and takes the owner's fast-path frees
// (LIFO, so a freed block is reused while still in cache), `local_free` takes the owner's
// slow-path frees and collected remote ones, and `thread_free` (atomic) takes other threads'
// frees. The owner merges the latter two into `free` only when `free` runs dry, so remote
// freers never touch the lists the owner's fast paths use.
#include "core/page.h"

#include "core/heap.h"
#include "core/options.h"
#include "core/segment.h"
#include "core/stats.h"

namespace heapscope {

void page_init(Page* page, Heap* heap, size_t bin, bool one_block) {
  size_t block_size = bin_block_size(bin);
  page->block_size = block_size;
  page->bin = static_cast<uint8_t>(bin);
  page->reserved =
      one_block ? 1 : static_cast<uint32_t>(page->slice_count * kSliceSize / block_size);
  page->capacity = 0;
  page->used = 0;
  page->keep_bias = 0;
  page->free = nullptr;
  page->local_free = nullptr;
  uint8_t flags = option(hs_option_check_frees) != 0 ? kPageChecked : 0;
  if (page->reserved == 1) flags |= kPageLarge;
  __atomic_store_n(&page->heap, heap, __ATOMIC_RELAXED);
  page->thread_free.store(nullptr, std::memory_order_relaxed);
  page->remote_in_full.store(0, std::memory_order_relaxed);
  page_init_owner(page, heap->thread_id, flags);
}

bool page_extend(Page* page) {
  if (page->capacity >= page->reserved) return false;
  // Carve about one OS page worth of blocks at a time: a fresh page does not become resident
  // all at once, and the list stays in address order.
  size_t count = 4096 / page->block_size;
  if (count == 0) count = 1;
  size_t left = page->reserved - page->capacity;
  if (count > left) count = left;
  uint8_t* first = page->area + page->capacity * page->block_size;
  for (size_t i = 0; i + 1 < count; ++i) {
    reinterpret_cast<Block*>(first + i * page->block_size)->next =
        reinterpret_cast<Block*>(first + (i + 1) * page->block_size);
  }
  reinterpret_cast<Block*>(first + (count - 1) * page->block_size)->next = page->free;
  page->free = reinterpret_cast<Block*>(first);
  page->capacity += static_cast<uint32_t>(count);
  return true;
}

uint32_t page_collect(Page* page) {
  uint32_t remote = 0;
  if (page->thread_free.load(std::memory_order_relaxed) != nullptr) {
    Block* list = page->thread_free.exchange(nullptr, std::memory_order_acquire);
    if (list != nullptr) {
      Block* tail = list;
      remote = 1;
      while (tail->next != nullptr) {
        tail = tail->next;
        ++remote;
      }
      tail->next = page->local_free;
      page->local_free = list;
      page->used -= remote;
    }
  }
  if (page->free == nullptr) {
    page->free = page->local_free;
    page->local_free = nullptr;
  }
  return remote;
}

Block* block_start(const Page* page, const void* p) {
  size_t offset = static_cast<size_t>(static_cast<const uint8_t*>(p) - page->area);
  return reinterpret_cast<Block*>(page->area + offset / page->block_size * page->block_size);
}

}  // namespace heapscope
