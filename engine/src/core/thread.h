// Threads: the per-thread data (segments owned, purge state, first-class heaps), the process
// and thread life cycle, abandonment and reclamation, the heap registry (thread.cc).
#pragma once

#include <atomic>
#include <cstddef>

#include "core/common.h"

namespace heapscope {

struct Heap;
struct Segment;

struct ThreadData {
  Heap* default_heap;
  Segment* segments;  // every segment this thread owns
  int64_t purge_deadline;
  // Adaptive purge delay (segment.cc): doubles, up to purge_delay_max, when memory purged
  // recently is taken again (purging it only cost a madvise and the page faults); halves
  // back toward purge_delay after a purge round with no such refault.
  int64_t purge_delay_ms;    // 0: the option's value
  bool refaulted;            // purged memory was reused since the last purge round
  bool in_purge;             // purge_due is running (it frees pages, which would re-enter it)
  uint32_t kept_page_frees;  // page_retire kept a class's last page: look at the clock every 16
  Heap* user_heaps;
  uint64_t ordinal;              // creation order of the thread (profiler seeding)
  uint64_t prof_rng;             // the thread's sampling stream (splitmix64 state)
  uint64_t prof_rng_generation;  // the seed generation prof_rng was seeded for
};

// ---- thread.cc ---------------------------------------------------------------------------------
void process_init();
Heap* thread_heap_init();  // the calling thread's default heap, creating it when needed
// Called first thing in a thread created through our pthread_create wrapper (1, 2, ... in
// creation order); threads without one are numbered by their first allocation instead.
void set_thread_creation_ordinal(uint64_t ordinal);
Heap* heap_struct_alloc();
void heap_struct_free(Heap* heap);
void registry_add(Heap* heap);
void registry_remove(Heap* heap);
Segment* reclaim_abandoned(ThreadData* td, size_t slices_wanted);
void reclaim_all_abandoned(ThreadData* td);
bool reclaim_segment_on_free(Segment* segment);  // before freeing into an abandoned page
// Some abandoned segment was freed into and nobody adopted it (freed_into set, or remote
// frees left in its pages): the next live thread's slow path or hs_collect adopts it.
extern std::atomic<bool> g_abandoned_freed_into;
void reclaim_freed_into(ThreadData* td);
void registry_visit(void (*visit)(const Heap*, void*), void* arg);

}  // namespace heapscope
