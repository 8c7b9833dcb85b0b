// The probe's output, shared by hs-probe and `hsbench probe`: one JSON line naming the object
// that serves each allocation function, and the --expect check. The exit codes are the
// contract library_check.h relies on.
#pragma once

#include <iosfwd>
#include <string>

namespace heapscope::probe {

inline constexpr int kProbeExitOk = 0;
inline constexpr int kProbeExitBadExpect = 2;  // --expect names no file
inline constexpr int kProbeExitMismatch = 3;   // this process does not run on --expect

// Writes {"malloc": ..., "free": ..., "realloc": ..., "calloc": ..., "consistent": ...,
// "allocator": <registry id>} to `out`; with a non-empty `expect`, checks it and explains a
// mismatch on `err`. Returns the exit code.
int report_identity(const std::string& expect, std::ostream& out, std::ostream& err);

}  // namespace heapscope::probe
