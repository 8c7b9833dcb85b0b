// Threads: the per-thread data (segments owned, purge state, first-class heaps), the process
// and thread life cycle, abandonment and reclamation, the heap registry (thread.cc).
#pragma once

#include <atomic>
#include <cstddef>

#include "core/common.h"

namespace heapscope {

struct Heap;
struct Page;
struct Segment;

struct ThreadData {
  Heap* default_heap;
  Segment* segments;  // every segment this thread owns
  int64_t purge_deadline;
  // Adaptive purge delay (segment.cc): doubles, up to purge_delay_max, when memory purged
  // recently is taken again (purging it only cost a madvise and the page faults); halves
  // back toward purge_delay after a purge round with no such refault.
  int64_t purge_delay_ms;  // 0: the option's value
  bool refaulted;          // purged memory was reused since the last purge round
  // purge_due is running (it frees pages, which would re-enter it), or a walk that frees
  // pages holds purge rounds off (PurgeRoundsDeferred)
  bool in_purge;
  uint32_t kept_page_frees;  // page_retire kept a class's last page: look at the clock every 16
  // Pages this thread took over in other threads' segments (takeover.cc): while any may be,
  // its purge rounds collect them, so remote frees waiting there do not pin those segments.
  // An upper bound, recounted by each such round.
  uint32_t foreign_pages;
  // A page another thread had taken over came back into one of this thread's segments
  // (return_taken_page): the next slow path takes such pages over (reclaim_returned_pages).
  std::atomic<bool> pages_returned;
  Heap* user_heaps;
  uint64_t ordinal;              // creation order of the thread (profiler seeding)
  uint64_t prof_rng;             // the thread's sampling stream (splitmix64 state)
  uint64_t prof_rng_generation;  // the seed generation prof_rng was seeded for
  // When our pthread_create wrapper started it (os::now_ms), else 0. Threads started
  // together are a batch (thread.cc).
  int64_t started_ms;
  // Blocks other threads freed on its pages, as its slow paths collected them: at its exit,
  // whether it freed its own blocks (a pool worker) or handed them out (a producer; thread.cc).
  uint64_t remote_frees_collected;
};

// Holds the thread's purge rounds off for a scope. A walk over a heap's queues or a segment's
// pages that frees some of them must: each span_free runs the round when one is due, and a
// round frees pages too (a class's idle kept page, emptied pages taken over from other
// threads) and releases segments left empty, which could be what the walk visits next.
class PurgeRoundsDeferred {
 public:
  explicit PurgeRoundsDeferred(ThreadData* td) : td_(td), was_in_purge_(td->in_purge) {
    td->in_purge = true;
  }
  ~PurgeRoundsDeferred() { td_->in_purge = was_in_purge_; }
  PurgeRoundsDeferred(const PurgeRoundsDeferred&) = delete;
  PurgeRoundsDeferred& operator=(const PurgeRoundsDeferred&) = delete;

 private:
  ThreadData* td_;
  bool was_in_purge_;
};

// ---- thread.cc ---------------------------------------------------------------------------------
void process_init();
Heap* thread_heap_init();  // the calling thread's default heap, creating it when needed
// Called first thing in a thread created through our pthread_create wrapper (1, 2, ... in
// creation order), which also notes its start time; threads without one are numbered by
// their first allocation instead.
void set_thread_creation_ordinal(uint64_t ordinal);
Heap* heap_struct_alloc();
void heap_struct_free(Heap* heap);
void registry_add(Heap* heap);
void registry_remove(Heap* heap);
// Copies up to `max` live heaps, after the first `skip`, into `out`; returns how many. The
// slots are never unmapped, so a copied pointer stays safe to lock after its thread ends.
size_t registry_snapshot(Heap** out, size_t max, size_t skip);
Segment* reclaim_abandoned(ThreadData* td, size_t slices_wanted);
// A segment an exited thread created before td left with at least kResidentAdoptMinSlices
// of free resident slices, `slices` of them in a run, adopted by td; nullptr if none is.
Segment* reclaim_abandoned_resident(ThreadData* td, size_t slices);
void reclaim_all_abandoned(ThreadData* td);
// A page taken over from another thread's segment (takeover.cc), out of the caller's queues,
// goes back to that segment: tidied there if the segment is abandoned, else left for its
// owner (an empty one purged first).
void return_taken_page(Page* page);
// A free into a page given back into a segment that has an owner (or is between owners):
// the freeing thread takes the page into its default heap first. False if it cannot.
bool claim_returned_page(Segment* segment, Page* page);
// Takes over the pages given back into td's segments (its slow path, when told to).
void reclaim_returned_pages(ThreadData* td);
// Frees p into its page of an abandoned segment; false if the segment has an owner again.
bool free_into_abandoned(Segment* segment, Page* page, void* p);
// Some abandoned segment has remote frees nobody collected: the next live thread's slow
// path or hs_collect collects them in place.
extern std::atomic<bool> g_abandoned_freed_into;
void reclaim_freed_into();
// Abandoned segments keep their free slices resident until this deadline (ms; 0 when none
// waits) so a thread started in place of the exited one reuses them without page faults;
// any live thread's purge round returns them after it.
extern std::atomic<int64_t> g_abandoned_purge_at;
void abandoned_purge_due(int64_t now);
void registry_visit(void (*visit)(const Heap*, void*), void* arg);
// Points every live heap's direct-table slots at the empty page, so every small and medium
// allocation misses into malloc_generic (memory events switched on; their owners' later
// direct_update calls keep them there while the gate is open).
void heaps_divert_direct_tables();

}  // namespace heapscope
