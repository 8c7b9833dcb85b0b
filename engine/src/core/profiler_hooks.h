// Where core meets the profiler: the sampler's entry points (profiler/sampler.cc; absent when
// HS_PROFILER is 0) and the countdown that decides when the slow path calls them.
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

}  // namespace heapscope
