// Seconds on the monotonic clock: the one time base for children's wall time, campaign ETAs and
// deadlines in the harness (never the wall clock, which can jump).
#pragma once

#include <chrono>

namespace heapscope::harness {

inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace heapscope::harness
