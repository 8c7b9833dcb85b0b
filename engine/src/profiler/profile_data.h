// What a profile writer is given: an immutable copy of the profile taken under the profiler
// lock (stacks and their counts), plus the figures for the header and the statistics block.
// Writers (text_writer, proto_writer) run with no lock held.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace heapscope::prof {

struct ProfileStack {
  const uintptr_t* pcs;    // raw return addresses, innermost first, allocator frames removed
  uint32_t depth;          // >= 1
  uint64_t live_objects;   // raw sampled counts
  uint64_t live_bytes;     // sum of the requested sizes of the live samples
  uint64_t accum_objects;  // raw cumulative counts (0 unless accumulating)
  uint64_t accum_bytes;
  // Unsampled (Horvitz-Thompson) estimates: each sample of size s weighs
  // 1 / (1 - exp(-s / interval)); objects = sum of weights, bytes = sum of weight * s.
  double live_objects_estimate;
  double live_bytes_estimate;
  double accum_objects_estimate;
  double accum_bytes_estimate;
};

// Copies the depth and the eight per-stack counts between the profiler's stack types and the
// public hs_prof_sample_info_t, which all name them alike.
template <typename To, typename From>
void copy_stack_counts(To& to, const From& from) {
  to.depth = from.depth;
  to.live_objects = from.live_objects;
  to.live_bytes = from.live_bytes;
  to.accum_objects = from.accum_objects;
  to.accum_bytes = from.accum_bytes;
  to.live_objects_estimate = from.live_objects_estimate;
  to.live_bytes_estimate = from.live_bytes_estimate;
  to.accum_objects_estimate = from.accum_objects_estimate;
  to.accum_bytes_estimate = from.accum_bytes_estimate;
}

// The allocator's exact statistics at dump time (the text format's '#' block).
struct ProfileHeapStats {
  uint64_t committed_bytes;
  uint64_t reserved_bytes;
  uint64_t allocated_bytes;  // usable bytes of live blocks
  uint64_t requested_bytes;  // cumulative bytes requested
  uint64_t alloc_count;
  uint64_t free_count;
  uint64_t pages;
  uint64_t heaps;
  uint64_t threads;
  uint64_t purged_bytes;
};

struct ProfileData {
  const ProfileStack* stacks;
  size_t stack_count;
  uint64_t sample_interval;  // mean bytes between samples
  bool accum;                // cumulative counts are meaningful
  uint64_t dropped_samples;
  uint64_t stack_table_overflows;
  ProfileHeapStats heap;
  int64_t time_nanos;  // wall-clock time of the copy (CLOCK_REALTIME)
};

}  // namespace heapscope::prof
