// Dumps of the built-in profile (text heap_v2 or profile.proto) to a path or a writer, and
// the exit dump's settings. All fail inside a visitor or sampling-suppressed code.
#pragma once

#include <stdint.h>

#include "heapscope/profile.h"
#include "profiler/config.h"
#include "profiler/os_buffer.h"
#include "profiler/profile_data.h"

namespace heapscope::prof {

// dump_to_path(path, format) is declared in prof_internal.h (the pprof profiler uses it).
bool dump_to_writer(int format, hs_prof_write_fn sink, void* arg);
// The peak profile (peak.h) to a path, as hs_prof_dump_format writes the current one.
bool dump_peak_to_path(const char* path, int format);

// Builds the whole current profile in `out` (no lock held while formatting).
bool render_current(int format, OsBuffer& out);
// Formats `profile` in `format` into `out`; false for an unknown format or without memory.
bool render_profile(const ProfileData& profile, int format, OsBuffer& out);
// Writes `data` to a new file named by the per-process pattern (support/output_path.h); says
// on stderr when that fails (`after_failure` ends that line) and, verbosely, where it went.
// `what` names the profile in those lines.
bool write_profile_file(const char* pattern, const OsBuffer& data, const char* what,
                        const char* after_failure = "");

// The exit dump: whether `path` fits its buffer, and taking the path and format that `s`
// gives (a path of nullptr turns the exit dump off).
bool exit_dump_path_fits(const char* path);
void set_exit_dump(const Settings& s);

}  // namespace heapscope::prof
