// Output file names for a process tree (profiles, the memory summary): every variable inherited
// by a tree of processes names a file per process, never one that a later process overwrites.
//   %p -> this process's id, %e -> the executable's file name, %% -> %; any other escape is
//   kept as written (with one notice).
// A name that contains the pid (it came from %p) belongs to this process and is replaced if it
// exists. A name without it is created exclusively: the first process to write it keeps it, a
// later one writes "<stem>.<pid><extension>" instead (the extension being everything from the
// first '.' of the file name), so no file of the tree is lost.
#pragma once

#include <stddef.h>

namespace heapscope {

inline constexpr size_t kOutputPathMax = 4096;

// Expands `pattern` into `out` (kOutputPathMax bytes). False when the result does not fit;
// *has_pid says whether a %p was expanded.
bool expand_output_path(const char* pattern, char* out, bool* has_pid);

// Copies `pattern` into `out` (kOutputPathMax bytes) with every unknown escape doubled, so
// that later expansions keep it as written without a notice each time; the notice is given
// here, once. False (and a notice) when the result does not fit.
bool normalize_output_pattern(const char* pattern, char* out);

// Opens the output file whose expanded name is `path` by the rule above, and leaves the
// name actually used in `chosen` (kOutputPathMax bytes). -1 when no file could be opened.
int open_output_file(const char* path, bool has_pid, char* chosen);

}  // namespace heapscope
