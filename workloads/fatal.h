// Always-on invariant failure for the workload layer: formats into a stack buffer and
// write(2)s it, so it never allocates (it may fire next to the timed region).
#pragma once

namespace heapscope::workloads {

[[noreturn]] void fatal(const char* what);

#define HS_WL_CHECK(cond, what)                       \
  do {                                                \
    if (!(cond)) ::heapscope::workloads::fatal(what); \
  } while (0)

}  // namespace heapscope::workloads
