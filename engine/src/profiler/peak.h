// The peak profile: a copy of the sampled live set taken near the high-water mark of the
// estimated live bytes. A new copy is taken only when the live set grows past the last copy's
// by kPeakGrowth (so a growing program makes O(log(peak / interval)) copies, each O(stacks)),
// which puts the kept profile within that fraction of the true peak.
#pragma once

#include "profiler/os_buffer.h"

namespace heapscope::prof {

inline constexpr double kPeakGrowth = 0.10;

// Under the lock, after a sample raised the live estimate to `live_bytes`: whether a new
// copy is due (the caller then calls peak_take with the lock released).
bool peak_due(double live_bytes);
// Takes the copy (no lock held); skipped when another thread is taking or writing one.
void peak_take();
// Forgets the copy (a new session starts).
void peak_reset();
// Formats the kept copy; false when there is none or it could not be formatted.
bool peak_render(int format, OsBuffer& out);
// The child of fork: the thread that may have held the peak's lock does not exist there.
void peak_fork_child();

}  // namespace heapscope::prof
