// The settings of one profiling session and where they come from: the HEAPSCOPE_PROF_*
// environment, an explicit interval or seed, or an hs_prof_config_t resolved field by field
// against the environment. One option table (config.cc) drives every one of these.
#pragma once

#include <stdint.h>

#include "heapscope/profile.h"

namespace heapscope::prof {

struct Settings {
  uint64_t interval = HS_PROF_DEFAULT_INTERVAL;
  uint64_t max_bytes = 0;
  uint64_t seed = 0;  // 0: draw one
  bool accum = false;
  bool accum_given = false;  // HEAPSCOPE_PROF_ACCUM was set (the start-up session's default
                             // differs, see prof_process_init)
  uint32_t depth = HS_PROF_DEFAULT_STACK_DEPTH;
  bool exit_path_given = false;
  const char* exit_path = nullptr;
  bool peak_path_given = false;
  const char* peak_path = nullptr;  // the peak profile at exit
  const char* prefix = nullptr;     // numbered profiles over time (interval_dumps.h)
  uint64_t dump_alloc_interval = 0, dump_inuse_interval = 0, dump_time_interval = 0;
  bool dump_max_files_given = false;
  uint64_t dump_max_files = 0;
  bool exit_format_given = false;
  uint32_t exit_format = HS_PROF_FORMAT_TEXT;
};

// A requested stack depth made valid: 0 means the default, and no more than the maximum.
uint32_t clamp_depth(uint64_t depth);
// Defaults overridden by every HEAPSCOPE_PROF_* variable that is set (malformed values warn
// and are ignored).
Settings settings_from_environment();
// hs_prof_start(interval): the environment, except that a nonzero interval wins and the exit
// dump (read once at start-up) is left alone.
Settings settings_for_start(uint64_t interval);
// hs_prof_start_ex: each field from the struct when given and (OVERRIDE, or the variable is
// unset), else from the environment, else the default. False for an invalid config.
bool settings_from_config(const hs_prof_config_t& config, Settings* out);
// HEAPSCOPE_PROF asks for a session at start-up.
bool environment_requests_profiling();

}  // namespace heapscope::prof
