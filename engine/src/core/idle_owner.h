// Giving back the pages that emptied while their owner was idle (idle_owner.cc), and the
// lock on a thread's slow paths that makes it safe.
#pragma once

#include <cstddef>

#include "core/heap.h"
#include "core/page.h"

namespace heapscope {

// The lock of OwnerSlowPath, for fork's handlers: enter returns the heap to pass to exit.
Heap* owner_slow_path_enter(Heap* heap);
void owner_slow_path_exit(Heap* locked);

// Held through each slow path of the calling thread that reads or changes its pages, queues
// or segments (nested ones count once). It locks the thread's default heap, whichever of the
// thread's heaps the path works on: all of them share its segments. While another thread
// holds that lock instead, it may give back the thread's emptied pages.
class OwnerSlowPath {
 public:
  explicit OwnerSlowPath(Heap* heap) : locked_(owner_slow_path_enter(heap)) {}
  ~OwnerSlowPath() { owner_slow_path_exit(locked_); }
  OwnerSlowPath(const OwnerSlowPath&) = delete;
  OwnerSlowPath& operator=(const OwnerSlowPath&) = delete;

 private:
  Heap* locked_;  // the default heap, or nullptr (the empty heap, or a thread in teardown)
};

// True while the thread owning heap holds its slow-path lock (assertions).
bool owner_slow_path_held(const Heap* heap);

// A remote free landed in a page of `owner` (free_remote): now and then, see whether the
// owner has been idle long enough to give back its emptied pages for it.
void note_free_into_idle(Heap* owner);
// From a thread's allocation slow path: the idle owner it freed into last is looked at
// again (its last pages empty with the last frees, after which nobody frees into it).
void sweep_idle_owner_due();
// The calling thread starts another (pthread_create): its direct tables are pointed at the
// empty page, so that until it allocates each size again (through the generic path, which
// points them back), no page of its is one its allocations pop from, and any of them that
// empties while it waits for the new thread can be given back.
void divert_own_direct_tables();
// The purge thread (purge_thread.cc): when `owner` is a live thread's heap whose slow-path
// lock is free, purges for it the segments whose purge deadline passed `grace_ms` or more ago
// (it ran no purge round since).
void purge_for_idle_owner(Heap* owner, int64_t now, int64_t grace_ms);

}  // namespace heapscope
