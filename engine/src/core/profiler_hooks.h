// Where core meets the profiler, and the only core header that touches the profiler's fields
// of Heap and Page: the sampler's entry points (profiler/sampling.cc; absent when HS_PROFILER is
// 0), the countdown that decides when the allocation paths call them, and the hooks core calls
// at page and heap events. The inline hooks compile to the same instructions as the field
// accesses they name, so the fast path pays nothing for going through them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/common.h"
#include "core/heap.h"

namespace heapscope {

// The countdown crossed zero with this allocation: true if it is a sample (re-arms either way).
bool sample_countdown_expired(Heap* heap, size_t size);
void record_sample(Heap* heap, void* p, size_t size);  // after the allocation succeeded
void sampled_free(Page* page, void* p);                // page has kPageSampled
void sampled_resize(Page* page, void* p, size_t new_size);
void sampled_set_requested(Page* page, void* p, size_t size);  // silent size correction
void prof_heap_destroy(Heap* heap);
void prof_page_release(Page* page);  // page->sample_bits is set
void prof_heap_init(Heap* heap);
void prof_rearm_own_heaps();
void prof_process_init();   // auto-start from the environment
void prof_fork(int phase);  // 0 prepare, 1 parent, 2 child

// Re-arms the countdown (owner thread only), keeping the requested-bytes count exact.
inline void countdown_set(Heap* heap, int64_t value) {
  heap->requested_folded += static_cast<uint64_t>(heap->countdown_armed - heap->sample_countdown);
  heap->countdown_armed = value;
  heap->sample_countdown = value;
}
// Moves the next sample point by delta bytes without counting them as requested.
inline void countdown_shift(Heap* heap, int64_t delta) {
  heap->sample_countdown += delta;
  heap->countdown_armed += delta;
}

// Takes a failed allocation's charge out of the requested-bytes count, leaving the distance to
// the next sample where it is: the charge may have re-armed the countdown, and giving the
// bytes back to the new arm would postpone the next sample by the failed size (a failed
// 64 MiB request silenced the sampler for the next 64 MiB of allocations).
inline void countdown_uncount(Heap* heap, size_t size) { heap->requested_folded -= size; }

// Charges an allocation of `size` to the heap's countdown (which doubles as its requested-bytes
// count); true when it crossed zero, and the caller goes to the sampler. With the profiler
// compiled in this subtract-and-branch is the fast path's only profiler cost.
HS_ALWAYS_INLINE bool countdown_charge(Heap* heap, size_t size) {
  return (heap->sample_countdown -= static_cast<int64_t>(size)) < 0;
}

// Whether p is the block record_sample saw last (forgetting it then): an allocation made with
// a rounded size that became a sample, whose recorded size the caller corrects.
HS_ALWAYS_INLINE bool take_last_sample(Heap* heap, const void* p) {
  if (HS_LIKELY(heap->prof_last_sample != p)) return false;
  heap->prof_last_sample = nullptr;
  return true;
}

// Requested bytes the countdown has counted: folded-in earlier arms plus this arm's distance
// covered. Read by other threads as the statistics do (a moment old, uninstrumented).
__attribute__((no_sanitize("thread"))) inline uint64_t countdown_requested_bytes(const Heap* heap) {
  int64_t armed = *static_cast<const volatile int64_t*>(&heap->countdown_armed);
  int64_t countdown = *static_cast<const volatile int64_t*>(&heap->sample_countdown);
  return *static_cast<const volatile uint64_t*>(&heap->requested_folded) +
         static_cast<uint64_t>(armed - countdown);
}

// Whether a sample of `size` gets a one-block page of its own: a live sample sends every free
// of its page off the fast path, so on a page of its own it slows nothing else. Only where
// that stays cheap: small blocks, at intervals of kSampleOwnPageMinInterval and up.
inline bool sample_wants_own_page(const Heap* heap, size_t size) {
  return size <= kSampleOwnPageMaxSize && heap->prof_interval >= kSampleOwnPageMinInterval;
}

// Whether the block at p (on a normal page) is a live profiler sample: its bit in the page's
// sample bitmap. Stable while the caller owns the block: only its allocation sets the bit.
HS_ALWAYS_INLINE bool page_block_is_sample(const Page* page, const void* p) {
  const uint64_t* bitmap = page->sample_bits.load(std::memory_order_acquire);
  if (bitmap == nullptr) return false;
  // Pages span at most kLargeMax bytes: a 32-bit divide, cheaper than a 64-bit one.
  static_assert(kLargeMax <= UINT32_MAX);
  uint32_t offset = static_cast<uint32_t>(static_cast<const uint8_t*>(p) - page->area);
  size_t bit = offset / static_cast<uint32_t>(page->block_size);
  return (__atomic_load_n(&bitmap[bit / 64], __ATOMIC_ACQUIRE) & (uint64_t{1} << (bit % 64))) != 0;
}

// A span goes back to its segment: the profiler drops the page's sample bitmap, if any.
inline void prof_on_span_free(Page* page) {
#if HS_PROFILER
  if (page->sample_bits.load(std::memory_order_relaxed) != nullptr) prof_page_release(page);
#else
  (void)page;
#endif
}

// A page descriptor is (re)initialized: it holds no samples.
inline void page_reset_samples(Page* page) { page->sampled_count = 0; }

}  // namespace heapscope
