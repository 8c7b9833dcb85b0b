// One callback per change kind, with its caller-owned argument. Dispatch copies the pair under
// a lock and calls it outside, counted in the current phase; installing flips the phase and
// waits until the calls of the previous phase have returned, so when the install returns the
// previous argument is no longer in use by any other thread.
#pragma once

#include "heapscope/memory_events.h"

namespace heapscope::events {

bool callback_set(hs_memory_change_kind_t kind, hs_memory_change_fn* fn, void* arg);
// Calls the kind's callback, if any, with the thread's nesting depth raised.
void dispatch(hs_memory_change_kind_t kind, void* address, uint64_t total, int64_t delta,
              uint64_t request);
// Whether the calling thread is running a callback right now.
bool in_callback();
// fork(): 0 before (takes the slot lock), 1 in the parent after, 2 in the child after: the
// slot lock, the installer lock and the in-flight counts start over, since the threads that
// held them or were counted do not exist there.
void callbacks_fork(int phase);

}  // namespace heapscope::events
