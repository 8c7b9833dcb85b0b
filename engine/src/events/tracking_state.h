// The process-wide tracking state: whether tracking is on, the tracking period, and the exact
// counters. Every change happens with a shard lock held (an allocation or free) or with all of
// them (enable, disable, snapshot), so a snapshot taken under all locks is one consistent cut.
#pragma once

#include <atomic>
#include <cstdint>

#include "heapscope/memory_events.h"

namespace heapscope::events {

struct Counters {
  std::atomic<uint64_t> live_bytes{0};
  std::atomic<uint64_t> live_count{0};
  std::atomic<uint64_t> accum_bytes{0};
  std::atomic<uint64_t> accum_count{0};
  std::atomic<uint64_t> peak_live_bytes{0};
  std::atomic<uint64_t> peak_time_ms{0};
  std::atomic<uint64_t> short_lived_count{0};
  std::atomic<uint64_t> histogram[HS_MEMORY_HISTOGRAM_BUCKETS] = {};
};

extern Counters g_counters;
// Written with all shard locks held; read with any one held (or relaxed, as a hint).
extern bool g_tracking_on;
extern uint64_t g_period;  // incremented each time tracking is switched on

bool tracking_set(bool on);  // returns the previous state
bool tracking_snapshot(hs_memory_snapshot_t* out);
uint64_t ms_since_first_enable();  // the peak's clock
// fork(): 0 before (takes the peak lock), 1 in the parent after (releases it), 2 in the child
// after (resets it: the thread that held it does not exist there).
void accounting_fork(int phase);

// Raises the calling thread's nesting depth for its lifetime: allocator calls made meanwhile
// are neither counted nor dispatched.
struct Nested {
  Nested();
  ~Nested();
  Nested(const Nested&) = delete;
  Nested& operator=(const Nested&) = delete;
};

}  // namespace heapscope::events
