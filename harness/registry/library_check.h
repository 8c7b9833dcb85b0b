// Does a child started the way a campaign starts it really run on this allocator? Answered by
// running the ownership probe (hs-probe, or `hsbench probe`) in such a child with --expect.
// Preloading is the only honest test: allocators built with initial-exec TLS (jemalloc, ours)
// cannot be dlopen'ed at all, and a library can load yet leave malloc to libc.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace heapscope::harness {

// argv prefix of a program that prints its allocator identity and, given "--expect PATH",
// exits 0 when PATH serves malloc/free/realloc/calloc and 3 when it does not.
using ProbeCommand = std::vector<std::string>;

// nullopt when `probe` started with our environment plus `child_env` (e.g. LD_PRELOAD=...)
// runs on `library`; otherwise the reason, e.g. "not loadable: ..." or
// "does not serve malloc in the child (...)".
std::optional<std::string> allocator_library_problem(const std::string& library,
                                                     const std::vector<std::string>& child_env,
                                                     const ProbeCommand& probe);

}  // namespace heapscope::harness
