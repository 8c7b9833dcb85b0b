// Test helper: a session that starts a fresh tracking period with a recording callback on every
// change kind, and the snapshot in one call. kEventsOn says which build the test runs against:
// in the events-off build every row expects the stubs' answer (nothing recorded, no snapshot).
#pragma once

#include <heapscope/heapscope.h>
#include <heapscope/memory_events.h>

#include <cstdint>

#ifndef HS_TEST_EVENTS
#error "HS_TEST_EVENTS must be 0 or 1"
#endif

namespace hs_events_test {

inline constexpr bool kEventsOn = HS_TEST_EVENTS != 0;

struct Recorded {
  hs_memory_change_t change;
  uint64_t live_seen;  // live_bytes in a snapshot taken inside the callback
};

struct Recorder {
  static constexpr int kMax = 256;
  Recorded events[kMax];
  int count = 0;
  bool snapshot_inside = true;
};

inline hs_memory_snapshot_t take_snapshot(bool* ok = nullptr) {
  hs_memory_snapshot_t s{};
  s.size = sizeof s;
  s.version = HS_MEMORY_SNAPSHOT_VERSION;
  bool got = hs_memory_events_snapshot(&s);
  if (ok != nullptr) *ok = got;
  return s;
}

inline void record(const hs_memory_change_t* change, void* arg) {
  Recorder* r = static_cast<Recorder*>(arg);
  if (r->count < Recorder::kMax) {
    r->events[r->count].change = *change;
    r->events[r->count].live_seen = r->snapshot_inside ? take_snapshot().live_bytes : 0;
  }
  r->count++;
}

// Tracking on (a new period) with `recorder` on every kind; off and cleared on destruction.
class Session {
 public:
  explicit Session(Recorder* recorder) {
    hs_memory_events_set_enabled(false);
    for (int k = 0; k < HS_MEMORY_CHANGE_KINDS; k++) {
      hs_memory_events_set_callback(static_cast<hs_memory_change_kind_t>(k), record, recorder);
    }
    hs_memory_events_set_enabled(true);
  }
  ~Session() {
    hs_memory_events_set_enabled(false);
    for (int k = 0; k < HS_MEMORY_CHANGE_KINDS; k++) {
      hs_memory_events_set_callback(static_cast<hs_memory_change_kind_t>(k), nullptr, nullptr);
    }
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

}  // namespace hs_events_test
