// Lines the engine's optional subsystems (profiler, memory events) write to stderr without
// allocating: notices about bad input the user gave them (always shown: a file silently
// missing is the failure this prevents) and, under HEAPSCOPE_VERBOSE, where a file went.
#pragma once

namespace heapscope {

// Writes "heapscope: " + the pieces + newline as one write(2), truncated at 512 bytes.
void notice(const char* a, const char* b = "", const char* c = "", const char* d = "",
            const char* e = "");
// The same, only when the verbose option is set.
void verbose_notice(const char* a, const char* b = "", const char* c = "", const char* d = "",
                    const char* e = "");

}  // namespace heapscope
