// The sampler's slow-path entry. The allocation fast path only subtracts from
// heap->sample_countdown; when it crosses zero we land here. With the profiler stopped (the
// only state until the profiler lands) the countdown is simply re-armed far away, so the
// fast path keeps its one predictable branch and this runs about once per 2^62 bytes.
#include "internal.h"

namespace heapscope {

void sample_countdown_expired(Heap* heap) { heap->sample_countdown = INT64_MAX; }

}  // namespace heapscope
