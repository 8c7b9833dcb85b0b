// Where hs-workload (the campaign child) is, and which workloads it knows.
// Lookup order: $HEAPSCOPE_WORKLOAD_EXE, then "hs-workload" next to hsbench (an installed
// layout), then ../workloads/hs-workload (the build tree), then the path CMake baked in.
#pragma once

#include <string>
#include <vector>

namespace heapscope::harness {

// The absolute path, or "" when none exists.
std::string find_workload_program();

// Names from `hs-workload --list`; throws std::runtime_error when the program fails.
std::vector<std::string> list_workloads(const std::string& program);

}  // namespace heapscope::harness
