// The hardened build (HS_HARDENED, libheapscope_hardened.so): what it changes and the helpers
// the allocator calls for it. Every helper is a no-op (or the plain operation) otherwise.
//
//   free-list links  stored as link ^ mask(block address), mask from a per-process secret: an
//                    overflow that writes a chosen pointer into a freed block decodes to a
//                    wild address, caught by the range check on every pop and collection
//   live blocks      their first word is zeroed when handed out, so a block whose word decodes
//                    to a link into its own page is (all but surely) free: the double-free test
//   frees            always checked: not a block start, a foreign pointer, unused memory or a
//                    double free aborts naming the address (the owner's frees screened inline,
//                    the rest in free_generic)
//   guard pages      the last OS page of a segment's header slices (before its first data
//                    slice) and the page before a huge block are inaccessible
//   carving order    the blocks carved out of a page are linked in a random order
#pragma once

#include <stdint.h>

#include "core/common.h"
#include "core/page.h"
#include "core/size_class.h"

#ifndef HS_HARDENED
#define HS_HARDENED 0
#endif

namespace heapscope {

struct Segment;

#if HS_HARDENED
// The per-process secret (hardening_init, before the first block is carved). Never changes
// afterwards: a forked child keeps its parent's lists.
extern uintptr_t g_link_secret;

// What a link stored in `slot` is XORed with: the slot's address times an odd constant, XORed
// with the secret, so equal links in two blocks are stored differently and a null link stores
// a value no zeroed or user-written word is likely to be.
HS_ALWAYS_INLINE uintptr_t link_mask(const Block* slot) {
  return g_link_secret ^ (reinterpret_cast<uintptr_t>(slot) * uintptr_t{0x9e3779b97f4a7c15});
}
#endif

HS_ALWAYS_INLINE Block* block_next(const Block* block) {
#if HS_HARDENED
  return reinterpret_cast<Block*>(block->link ^ link_mask(block));
#else
  return reinterpret_cast<Block*>(block->link);
#endif
}

HS_ALWAYS_INLINE void block_set_next(Block* block, const Block* next) {
#if HS_HARDENED
  block->link = reinterpret_cast<uintptr_t>(next) ^ link_mask(block);
#else
  block->link = reinterpret_cast<uintptr_t>(next);
#endif
}

// Every free is checked in the hardened build; elsewhere when the check_frees option asks.
bool frees_checked();

#if HS_HARDENED
// A link read from a free block points outside its page's carved blocks: the block was
// overwritten after it was freed. Aborts naming the block.
[[noreturn]] HS_COLD void corrupted_free_list(const Block* block);

// True when `next` may follow a block of a page whose carved blocks are the `carved_bytes` from
// `area`: null (the list's end), or one of them.
HS_ALWAYS_INLINE bool link_in_page(const Block* next, const uint8_t* area, size_t carved_bytes) {
  return next == nullptr ||
         reinterpret_cast<uintptr_t>(next) - reinterpret_cast<uintptr_t>(area) < carved_bytes;
}
#endif

// "Is this offset a multiple of the block size" without a division (Lemire, Kaser and Kurz,
// 2019): for n < 2^32, n is a multiple of d exactly when n * c <= c - 1 in 64-bit arithmetic,
// c = ceil(2^64 / d). One constant per size class.
struct BinDivisibility {
  uint64_t constant[kBinCount];
};
constexpr BinDivisibility make_bin_divisibility() {
  BinDivisibility table{};
  for (size_t bin = 1; bin < kBinCount; ++bin) {
    table.constant[bin] = UINT64_MAX / bin_block_size(bin) + 1;
  }
  return table;
}
inline constexpr BinDivisibility kBinDivisibility = make_bin_divisibility();
static_assert(bin_block_size(kBinCount - 1) < (uint64_t{1} << 32));

// True when `offset` (below 2^32: within the page's carved blocks) starts a block of `page`.
HS_ALWAYS_INLINE bool is_block_offset(const Page* page, size_t offset) {
  uint64_t c = kBinDivisibility.constant[page->bin];
  return offset * c <= c - 1;
}

#if HS_HARDENED
// The owner's free of p, screened inline: true when p starts a carved block whose first word
// does not decode to a link into the page (a live block's word was zeroed when handed out).
// Otherwise check_free (free.cc) decides: an invalid or double free, or a coincidence.
HS_ALWAYS_INLINE bool own_free_passes_screen(const Page* page, const void* p) {
  const uintptr_t area = reinterpret_cast<uintptr_t>(page->area);
  const size_t carved = page->capacity * page->block_size;
  size_t offset = reinterpret_cast<uintptr_t>(p) - area;
  if (offset >= carved || !is_block_offset(page, offset)) return false;
  const Block* link = block_next(static_cast<const Block*>(p));
  size_t link_offset = reinterpret_cast<uintptr_t>(link) - area;
  return link != nullptr && (link_offset >= carved || !is_block_offset(page, link_offset));
}
#endif

// Sets the secret (hardened build): once, from process_init, before any page exists.
void hardening_init();
// Places the guard page of a fresh normal segment (the end of its header slices).
void guard_segment_header(Segment* segment);
// A huge mapping's guard page, the OS page before the block at `block_offset`: placed (on)
// or removed (off, before a remap: the kernel resizes one mapping range only).
void guard_huge_block(Segment* segment, size_t block_offset, bool on);
// Links `count` blocks of `size` bytes starting at `first` into a list ending in `tail`, in
// address order, or in a random order in the hardened build. Returns the list's head.
Block* link_carved_blocks(uint8_t* first, size_t count, size_t size, Block* tail);

}  // namespace heapscope
