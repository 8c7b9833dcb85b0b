// The background purger (option purge_thread): a thread of the engine's own that returns free
// memory to the OS on the purge delay while no thread calls the allocator.
#pragma once

#include <atomic>

#include "core/common.h"

namespace heapscope {

// 1 while a start is wanted (the option was set, or a forked child had one running).
extern std::atomic<int> g_purge_thread_wanted;
// True while it runs with the option on (re-read at each of its wake-ups): its timer, not only
// the allocator's calls, then enforces the purge deadlines.
extern std::atomic<bool> g_purge_thread_on;

// The option at its default (-1): the thread is started once the allocator has memory to hold
// that only its timer would release in time (thread.cc), not before.
bool purge_thread_starts_on_demand();
// Asks for a start at the next allocation slow path: the option turned on from the
// environment while the allocator initialises (hs_option_set starts it at once), or option -1
// once there is memory to hold (safe under the allocator's locks: it only sets a flag).
void purge_thread_request();
// Starts it unless it runs already; only where the allocator holds no lock (it may allocate).
void purge_thread_start();
// The child of a fork has no such thread: with the option at 1, one starts again at its next
// allocation slow path; at -1, once the child itself has memory to hold (not between a fork
// and an exec).
void purge_thread_fork_child();

// From malloc_generic's entry, before any lock: one relaxed load when nothing is wanted.
HS_ALWAYS_INLINE void purge_thread_start_if_wanted() {
  if (HS_UNLIKELY(g_purge_thread_wanted.load(std::memory_order_relaxed) != 0)) {
    purge_thread_start();
  }
}

HS_ALWAYS_INLINE bool purge_thread_running() {
  return g_purge_thread_on.load(std::memory_order_relaxed);
}

}  // namespace heapscope
