// The fast paths, inlined into every entry point (hs_* in api.cc, malloc & co in
// override_malloc.cc, operator new in override_new.cc).
//
//   malloc(size <= 64 KiB): heap->direct: (size+15)/16 up to 1 KiB, (size+255)/256 above
//            -> page; pop page->free; count.
//   free(p): segment map says "ours" -> page = segment->pages[slice] -> owner thread and no
//            page flags -> push onto page->free (LIFO: the next malloc of the class reuses
//            the block just freed, still in cache); retire the page if it became empty.
// Everything else tail-calls a named slow path (malloc_generic.cc, free.cc).
#pragma once

#include <errno.h>
#include <string.h>

#include "core/hardening.h"
#include "core/heap.h"
#include "core/huge.h"
#include "core/page.h"
#include "core/page_counts.h"
#include "core/page_queue.h"
#include "core/profiler_hooks.h"
#include "core/segment.h"
#include "core/thread.h"
#include "events/events_hooks.h"
#include "platform/platform.h"

namespace heapscope {

// Pops a block off a page known to have one, for an allocation already charged to the
// profiler's countdown (or built without the profiler, then counting the requested bytes).
HS_ALWAYS_INLINE void* page_pop_charged(Heap* heap, Page* page, Block* block, size_t size) {
#if HS_HARDENED
  Block* next = block_next(block);
  if (HS_UNLIKELY(!link_in_page(next, page->area, page->capacity * page->block_size))) {
    corrupted_free_list(block);
  }
  page->free = next;
  block->link = 0;  // a live block's first word never decodes as a link (the double-free test)
#else
  Block* next = block_next(block);
  page->free = next;
  // The next malloc of this class reads `next`'s link: in a large live set freed in random
  // order that block is cold, and the load would stall that call (hs-ab-loop mixed: -4 to -7%).
  __builtin_prefetch(next);
#endif
  page->used++;
  page_count_pop(page);
#if !HS_PROFILER
  heap->counters.requested_bytes.add(size);  // else counted by the countdown
#else
  (void)heap;
  (void)size;
#endif
  return block;
}

// Pops a block off a page known to have one, charging the profiler countdown and counters.
HS_ALWAYS_INLINE void* page_pop(Heap* heap, Page* page, Block* block, size_t size) {
#if HS_PROFILER
  // The profiler's only fast-path cost: one subtract and a well-predicted branch.
  if (HS_UNLIKELY(countdown_charge(heap, size))) {
    return malloc_sampled(heap, size);
  }
#endif
  return page_pop_charged(heap, page, block, size);
}

// When the allocation list is dry, the owner's own frees are ready without a collection.
HS_ALWAYS_INLINE Block* take_local_free(Page* page) {
  Block* block = page->local_free;
  if (block != nullptr) {
    page->local_free = nullptr;
    page->free = block;
  }
  return block;
}

// A block ready on the page (its allocation list, else the owner's own frees), or nullptr.
HS_ALWAYS_INLINE Block* page_ready_block(Page* page) {
  Block* block = page->free;
  return block != nullptr ? block : take_local_free(page);
}

// The page the direct tables give for a size up to kMediumBlockMax (the empty page when the
// class has none yet).
HS_ALWAYS_INLINE Page* direct_page(const Heap* heap, size_t size) {
  if (size <= kSmallDirectMax) {
    return direct_slot_load(&heap->direct.slots[(size + kMinAlign - 1) / kMinAlign]);
  }
  return direct_slot_load(&heap->direct.medium[(size + kMediumDirectStep - 1) / kMediumDirectStep]);
}

// Pops from the page a direct table gave for the size, or takes the generic path.
HS_ALWAYS_INLINE void* direct_malloc(Heap* heap, Page* page, size_t size) {
  Block* block = page->free;
  if (HS_LIKELY(block != nullptr)) return page_pop(heap, page, block, size);
  block = take_local_free(page);
  if (block != nullptr) return page_pop(heap, page, block, size);
  return malloc_generic(heap, size);
}

// Every size. Memory events cost the small and medium sizes nothing: while tracking is on,
// every heap's direct tables point at the empty page (heaps_divert_direct_tables), so those
// calls miss into malloc_generic, which dispatches them.
HS_ALWAYS_INLINE void* heap_malloc(Heap* heap, size_t size) {
  if (HS_LIKELY(size <= kSmallDirectMax)) {
    return direct_malloc(
        heap, direct_slot_load(&heap->direct.slots[(size + kMinAlign - 1) / kMinAlign]), size);
  }
  if (size <= kMediumBlockMax) {
    Page* page =
        direct_slot_load(&heap->direct.medium[(size + kMediumDirectStep - 1) / kMediumDirectStep]);
    return direct_malloc(heap, page, size);
  }
  if (size <= kHugeMin) {
    // Large sizes: the first page of the bin's queue (no table to divert: events check here).
    if (events_intercept()) return events_malloc(heap, size);
    Page* page = heap->queues[bin_of(size)].first;
    if (page != nullptr) return direct_malloc(heap, page, size);
  }
  return malloc_generic(heap, size);
}

// The heap that served an allocation made "on" `heap`: the thread's new default heap when
// `heap` was still the static empty heap.
HS_ALWAYS_INLINE Heap* tls_heap_or(Heap* heap) { return heap == &g_empty_heap ? tls_heap : heap; }

HS_ALWAYS_INLINE void* malloc_impl(size_t size) { return heap_malloc(tls_heap, size); }

// The Page entry of the slice holding `address` in a normal segment: segment base + the
// pages array + slice index * 128, written as shift-and-mask so the compiler emits four
// instructions rather than subtract, shift, then scale (this is on free's fast path).
HS_ALWAYS_INLINE Page* slice_page(uintptr_t address) {
  static_assert(sizeof(Page) == size_t{1} << 7 && kSliceShift > 7);
  constexpr uintptr_t kIndexBits = (kSlicesPerSegment - 1) << 7;
  uintptr_t segment = address & ~kSegmentMask;
  uintptr_t offset = (address >> (kSliceShift - 7)) & kIndexBits;
  return reinterpret_cast<Page*>(segment + offsetof(Segment, pages) + offset);
}

// The page holding p, or nullptr for pointers heapscope does not own.
HS_ALWAYS_INLINE Page* page_of(const void* p) {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  size_t index = address >> kSegmentShift;
  if (HS_UNLIKELY(index - 1 >= kSegmentMapSize - 1)) return nullptr;
  uint8_t kind = g_segment_map[index].load(std::memory_order_relaxed);
  if (HS_UNLIKELY(!is_normal_segment_entry(kind))) {
    Segment* segment = segment_of_slow(p);
    if (segment == nullptr) return nullptr;
    return &segment->pages[0];  // a huge mapping: one block, described by pages[0]
  }
  Page* page = slice_page(address);
  return page - page->slice_back;
}

// `used` falls by one, published after the push that preceded it: a thread that sees it fall
// to the page's remote frees empties the page for its idle owner (idle_owner.cc) and must
// see that push in the list it drops. A release store; on x86-64 every store is one, so
// only the compiler is held back and the decrement stays one instruction (a relaxed
// read-modify-write there; TSan builds use the atomic form, which it can see).
HS_ALWAYS_INLINE uint32_t page_used_decrement(Page* page) {
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
  std::atomic_signal_fence(std::memory_order_release);
  return --page->used;
#else
  const uint32_t used = page->used - 1;
  __atomic_store_n(&page->used, used, __ATOMIC_RELEASE);
  return used;
#endif
}
// The owner frees a block of one of its pages that carries no flag (or, from free_generic, only
// kPageSampled while the block itself is not a sample): push it for the next malloc.
HS_ALWAYS_INLINE void free_to_own_page(Page* page, void* p) {
  Block* block = static_cast<Block*>(p);
  block_set_next(block, page->free);
  page->free = block;
  // Counted by what `used` falls by (page_counts.h): no counter to update here.
  // A page alone in its queue is kept when it empties: its `used` carries a bias of one
  // for that (see Page::used), so reaching zero means a page that shares its queue, and the
  // malloc/free ping-pong on a lone page costs no test here. (Large pages carry kPageLarge,
  // so their frees reach page_retire through the generic path.)
  if (HS_UNLIKELY(page_used_decrement(page) == 0)) page_retire(page->heap, page);
}

// free of a block on a normal segment's page (the segment map said so).
HS_ALWAYS_INLINE void free_segment_block(void* p) {
  Page* page = slice_page(reinterpret_cast<uintptr_t>(p));
  // A branch, not an unconditional subtract: small blocks live on one-slice pages (always 0
  // here), and a predicted branch lets the CPU address the page without waiting for this
  // load, which is otherwise on the malloc -> free -> malloc dependency chain.
  if (HS_UNLIKELY(page->slice_back != 0)) page -= page->slice_back;
  // Mine and no flag set: the owner word equals the thread pointer.
  if (HS_LIKELY(page->owner_word.load(std::memory_order_relaxed) == os::thread_id())) {
#if HS_HARDENED
    // A call out of line only when the screen fails, so the fast path keeps no frame.
    if (HS_UNLIKELY(!own_free_passes_screen(page, p))) return free_own_checked(page, p);
#endif
    free_to_own_page(page, p);
    return;
  }
  free_generic(page, p);
}

HS_ALWAYS_INLINE void free_impl(void* p) {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  // Addresses beyond the map (never ours) and NULL (map slot 0, never a segment: nothing is
  // mapped in the first 32 MiB) both leave through free_unusual. So does every free while
  // memory events are tracking: normal segments are then entered as kMapSegmentTracked
  // (segment_map_retag), and free_unusual dispatches them, so the gate costs this path nothing.
  if (HS_UNLIKELY((address >> kAddressBits) != 0 ||
                  g_segment_map[address >> kSegmentShift].load(std::memory_order_relaxed) !=
                      kMapSegment)) {
    free_unusual(p);
    return;
  }
  free_segment_block(p);
}

// Usable bytes from p to the end of its block; 0 for NULL or a pointer we do not own.
inline size_t usable_size_impl(const void* p) {
  if (p == nullptr) return 0;
  const Page* page = page_of(p);
  if (page == nullptr || page->block_size == 0) return 0;
  const uint8_t* start = reinterpret_cast<const uint8_t*>(block_start(page, p));
  return static_cast<size_t>(start + page->block_size - static_cast<const uint8_t*>(p));
}

// Allocations that bypass heap_malloc (huge aligned or zeroed blocks) charge the profiler's
// countdown here, after the fact.
HS_ALWAYS_INLINE void* charge_sample(Heap* heap, void* p, size_t size) {
#if HS_PROFILER
  if (p != nullptr && HS_UNLIKELY(countdown_charge(heap, size)) &&
      sample_countdown_expired(heap, size)) {
    record_sample(heap, p, size);
  }
#else
  (void)heap;
  (void)size;
#endif
  return p;
}

// An in-place realloc/expand of p (new requested size): tell the profiler if p is a sample.
HS_ALWAYS_INLINE void note_resize_in_place(void* p, size_t new_size) {
#if HS_PROFILER
  Page* page = page_of(p);
  if (HS_UNLIKELY(page != nullptr && (page_flags(page) & kPageSampled) != 0)) {
    sampled_resize(page, p, new_size);
  }
#else
  (void)p;
  (void)new_size;
#endif
}

// The block was allocated with a rounded size: if it became a sample, the sample records what
// was asked for. Only a sample pays the lookup (record_sample remembers its block).
HS_ALWAYS_INLINE void note_sampled_request(Heap* heap, void* p, size_t size) {
#if HS_PROFILER
  if (HS_UNLIKELY(take_last_sample(heap, p))) sampled_set_requested(page_of(p), p, size);
#else
  (void)heap;
  (void)p;
  (void)size;
#endif
}

inline bool is_valid_alignment(size_t alignment) {
  return alignment != 0 && (alignment & (alignment - 1)) == 0;
}

// Alignment must already be validated (a power of two). Never inlined: its one out-of-line
// copy lies in the code every program maps (hot_text.ld), and the shells that call it stay small.
HS_NOINLINE inline void* heap_malloc_aligned(Heap* heap, size_t size, size_t alignment) {
  if (events_intercept()) return events_malloc_aligned(heap, size, alignment);
  if (alignment <= kMinAlign) return heap_malloc(heap, size);
  if (HS_UNLIKELY(size > kMaxAllocSize)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (alignment <= kNaturalAlignMax) {
    // Page areas are slice aligned and every class size is a multiple of any power of two
    // it was rounded to, so rounding the size up is all it takes.
    size_t rounded = (size + alignment - 1) & ~(alignment - 1);
    if (rounded == 0) rounded = alignment;
    void* p = heap_malloc(heap, rounded);
    // Statistics count what the caller asked for, not the rounding (modular add of size -
    // rounded). heap_malloc may have initialized the thread's heap, so re-read it.
    if (p != nullptr) {
      Heap* served = tls_heap_or(heap);
      served->counters.requested_bytes.add(size - rounded);
      note_sampled_request(served, p, size);
    }
    return p;
  }
  if (HS_UNLIKELY(heap == &g_empty_heap)) {
    heap = thread_heap_init();
    if (heap == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
  }
  void* p = huge_alloc(heap, size, alignment, false);
  if (p == nullptr) errno = ENOMEM;
  return charge_sample(heap, p, size);
}

// Zeroing allocation: the whole usable size reads zero (see the rezalloc rules in heapscope.h).
inline void* heap_zalloc_aligned(Heap* heap, size_t size, size_t alignment) {
  if (events_intercept()) return events_zalloc_aligned(heap, size, alignment);
  if (size > kHugeMin && alignment <= kHugeBlockOffset && size <= kMaxAllocSize) {
    if (HS_UNLIKELY(heap == &g_empty_heap)) heap = thread_heap_init();
    if (heap == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
    void* p = huge_alloc(heap, size, 0, true);  // fresh mappings are already zero
    if (p == nullptr) errno = ENOMEM;
    return charge_sample(heap, p, size);
  }
  void* p = heap_malloc_aligned(heap, size, alignment);
  if (p != nullptr) memset(p, 0, usable_size_impl(p));
  return p;
}

inline bool mul_overflows(size_t count, size_t size, size_t* total) {
  if (HS_UNLIKELY(__builtin_mul_overflow(count, size, total))) {
    errno = ENOMEM;
    return true;
  }
  return false;
}

// Resizes a large or huge block without copying it (realloc and hs_expand): a one-block page
// grows over the free slices after its span; a huge mapping grows or shrinks with the
// kernel's help, moving only when may_move. Returns the block (p, or where the huge one
// moved) charged to the profiler at new_size, or nullptr when that cannot be done.
inline void* resize_without_copying(Heap* heap, void* p, size_t usable, size_t new_size, bool zero,
                                    bool may_move) {
  // Only one-block pages (growth spans, large and huge blocks) resize without copying.
  if (usable < kGrowthSpanMin || heap == &g_empty_heap) return nullptr;
  Page* page = page_of(p);
  if (new_size <= kHugeMin) {
    if (!large_grow_in_place(page, new_size)) return nullptr;
    if (zero) memset(static_cast<uint8_t*>(p) + usable, 0, page->block_size - usable);
    return charge_sample(heap, p, new_size);
  }
  if ((page_flags(page) & kPageHuge) == 0) return nullptr;  // large to huge: copy
  void* q = huge_realloc(heap, page, new_size, zero, may_move);
  return q != nullptr ? charge_sample(heap, q, new_size) : nullptr;
}

// realloc and its variants; a block that has to move goes to `heap` (in place it stays where
// it is, in its own heap).
inline void* heap_realloc(Heap* heap, void* p, size_t new_size, size_t alignment, bool zero) {
  if (events_intercept()) return events_realloc(heap, p, new_size, alignment, zero);
  if (p == nullptr) {
    return zero ? heap_zalloc_aligned(heap, new_size, alignment)
                : heap_malloc_aligned(heap, new_size, alignment);
  }
  if (new_size == 0) {
    free_impl(p);
    return nullptr;
  }
  size_t usable = usable_size_impl(p);
  if (HS_UNLIKELY(usable == 0)) {
    if (frees_checked()) fatal("heapscope: realloc of a pointer heapscope does not own", p);
    warning("heapscope: realloc of a pointer heapscope does not own", p);
    errno = EINVAL;
    return nullptr;
  }
  bool aligned_ok = (reinterpret_cast<uintptr_t>(p) & (alignment - 1)) == 0;
  if (new_size <= usable && new_size >= usable / 2 && aligned_ok) {
    if (zero) memset(static_cast<uint8_t*>(p) + new_size, 0, usable - new_size);
    note_resize_in_place(p, new_size);
    return p;
  }
  // (A moved huge block starts 64 KiB into a segment-aligned mapping: aligned up to that.)
  if (aligned_ok && alignment <= kHugeBlockOffset) {
    if (void* q = resize_without_copying(heap, p, usable, new_size, zero, true)) return q;
  }
  void* q = nullptr;
  if (new_size > usable && new_size >= kGrowthSpanMin && new_size <= kMediumBlockMax &&
      alignment <= kMinAlign && heap != &g_empty_heap) {
    // Growing into the upper medium classes: a slice of its own, to grow on without copying.
    q = charge_sample(heap, malloc_one_block_page(heap, new_size), new_size);
  }
  if (q == nullptr) q = heap_malloc_aligned(heap, new_size, alignment);
  if (q == nullptr) return nullptr;  // p stays valid, errno is ENOMEM
  size_t keep = usable < new_size ? usable : new_size;
  memcpy(q, p, keep);
  if (zero) {
    size_t q_usable = usable_size_impl(q);
    memset(static_cast<uint8_t*>(q) + keep, 0, q_usable - keep);
  }
  free_impl(p);
  return q;
}

inline void* realloc_impl(void* p, size_t new_size, size_t alignment, bool zero) {
  return heap_realloc(tls_heap, p, new_size, alignment, zero);
}

inline void* calloc_impl(size_t count, size_t size) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return heap_zalloc_aligned(tls_heap, total, kMinAlign);
}

inline void* malloc_aligned_impl(size_t size, size_t alignment) {
  if (!is_valid_alignment(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return heap_malloc_aligned(tls_heap, size, alignment);
}

inline int posix_memalign_impl(void** out, size_t alignment, size_t size) {
  if (!is_valid_alignment(alignment) || alignment < sizeof(void*)) return EINVAL;
  int saved = errno;
  void* p = heap_malloc_aligned(tls_heap, size, alignment);
  errno = saved;  // posix_memalign reports through its result, not errno
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

}  // namespace heapscope
