// Lines the profiler writes to stderr without allocating: notices about bad input the user
// gave it (always shown: a profile silently missing is the failure this prevents) and, under
// HEAPSCOPE_VERBOSE, where a profile went.
#pragma once

namespace heapscope::prof {

// Writes "heapscope: " + the pieces + newline as one write(2), truncated at 512 bytes.
void notice(const char* a, const char* b = "", const char* c = "", const char* d = "");
// The same, only when the verbose option is set.
void verbose_notice(const char* a, const char* b = "", const char* c = "", const char* d = "");

}  // namespace heapscope::prof
