// Statistics counters: per-heap owner counters (plain adds on the fast paths) and the
// process-wide counters (stats.cc), summed when hs_stats_get reads them.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/common.h"
#include "core/size_class.h"
#include "heapscope/heapscope.h"

namespace heapscope {

struct Heap;

// A counter written only by its owning thread with a plain add (one instruction on the fast
// path). Other threads read it only through read_counter(), a relaxed atomic load in code
// that TSan does not instrument: the statistics readers accept a value that is a moment old.
struct OwnerCounter {
  uint64_t value = 0;
  HS_ALWAYS_INLINE void add(uint64_t n) { value += n; }
  // A volatile load (one aligned mov on x86-64): not an atomic builtin, which TSan would still
  // instrument inside the no_sanitize("thread") readers and report against the plain add.
  __attribute__((no_sanitize("thread"))) uint64_t get() const {
    return *static_cast<const volatile uint64_t*>(&value);
  }
};

// Per size class, what the heap's pages handed out and what came back to them (the owner's
// frees and the remote frees it collected), folded in from the pages (page_counts.h); counts
// and bytes of all classes are summed when the statistics are read. The plain counters take
// what is counted elsewhere (huge blocks, frees into exited threads' pages, heap teardown,
// growth in place).
struct HeapCounters {
  OwnerCounter bin_allocs[kBinCount];
  OwnerCounter bin_frees[kBinCount];
  OwnerCounter alloc_count;
  OwnerCounter free_count;
  OwnerCounter requested_bytes;
  OwnerCounter allocated_total;  // block bytes handed out (cumulative)
  OwnerCounter freed_total;      // block bytes given back (cumulative)
};

struct GlobalCounters {
  std::atomic<uint64_t> reserved_bytes;
  std::atomic<uint64_t> committed_bytes;
  std::atomic<uint64_t> purged_bytes;
  std::atomic<uint64_t> segments;
  std::atomic<uint64_t> pages;
  std::atomic<uint64_t> heaps;
  std::atomic<uint64_t> threads;
  std::atomic<uint64_t> huge_count;
  std::atomic<uint64_t> huge_remaps;  // huge reallocs served by remapping instead of copying
  std::atomic<uint64_t> abandoned_segments;
  std::atomic<uint64_t> pages_taken_over;  // cumulative (takeover.cc)
  std::atomic<uint64_t> pages_given_back;  // cumulative (idle_owner.cc)
  std::atomic<uint64_t> committed_peak;
  // Counters of heaps that no longer exist.
  std::atomic<uint64_t> dead_alloc_count, dead_free_count, dead_requested, dead_allocated,
      dead_freed;
};
extern GlobalCounters g_counters;
void counters_merge_dead(const Heap* heap);
uint64_t heap_requested_bytes(const Heap* heap);  // exact for the owner, a moment old for others
// Blocks the heap handed out and got back, as its statistics count them (its pages' folded
// counts and its huge blocks): exact for the owner once it folded its pages (heap_fold_counts).
struct BlockTotals {
  uint64_t allocations;
  uint64_t frees;
};
BlockTotals heap_block_totals(const Heap* heap);
// hs_stats_get; collect_own: the calling thread's heaps first collect the remote frees in
// their pages (the public call), or only fold their pages (from inside an allocation, where
// the profiler reads the statistics and nothing may be freed under its caller).
int stats_get(hs_stats_t* out, bool collect_own);
void note_committed(uint64_t added);  // committed_bytes += added, tracking the peak

}  // namespace heapscope
