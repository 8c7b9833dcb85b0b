// Dumps over time: numbered profiles of the built-in session under HEAPSCOPE_PROF_DUMP_PREFIX,
// written every N estimated allocated bytes, every N bytes of in-use growth past the last
// dump, and every N seconds, whichever comes first. Checked after each built-in sample (a
// thread that stops allocating also stops the clock's dumps). The file names are
// "<prefix>.<sequence, 4 digits>.<heap|pb.gz>", per process by the support/output_path.h
// rule; after HEAPSCOPE_PROF_DUMP_MAX_FILES files (default 100) the process writes no more and
// says so. Each problem is one stderr line per process: an unknown escape in the prefix is
// reported when it is read, and the first file that cannot be written ends the sequence.
#pragma once

#include "profiler/config.h"

namespace heapscope::prof {

// Takes the prefix, triggers and bound from `s` (at process start-up).
void interval_dumps_configure(const Settings& s);
// After a sample, with no lock held: writes the next profile when one of the triggers is due.
void interval_dumps_check();

}  // namespace heapscope::prof
