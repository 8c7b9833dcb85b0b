// fork() and the memory-events locks. A thread holding a shard, slot or peak lock at the fork
// does not exist in the child, so without this a child that tracks, snapshots or installs a
// callback would wait forever. The engine's fork handlers (core/thread.cc) call events_fork
// first before and last after, because a memory-events visitor may allocate while it holds a
// shard lock: the events locks come before the allocator's and the profiler's.
#include "events/events_hooks.h"  // defines HS_MEMORY_EVENTS
#if HS_MEMORY_EVENTS
#include "events/callbacks.h"
#include "events/live_table.h"
#include "events/tracking_state.h"

namespace heapscope {

void events_fork(int phase) {
  if (phase == 0) {
    events::lock_all_shards();  // shards before the peak lock: live_add runs under a shard
    events::accounting_fork(0);
    events::callbacks_fork(0);
  } else if (phase == 1) {
    events::callbacks_fork(1);
    events::accounting_fork(1);
    events::unlock_all_shards();
  } else {
    events::callbacks_fork(2);
    events::accounting_fork(2);
    events::reset_all_shard_locks();
  }
}

}  // namespace heapscope
#endif
