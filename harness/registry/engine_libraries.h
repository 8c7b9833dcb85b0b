// Where our own allocator libraries are. CMake bakes in the build tree's libheapscope.so and
// libheapscope_noprof.so (without making hsbench depend on building them); the environment
// variables HEAPSCOPE_ENGINE_LIB and HEAPSCOPE_ENGINE_NOPROF_LIB override them, e.g. to test an
// installed or older build.
#pragma once

#include <string>

namespace heapscope::harness {

struct EngineLibraries {
  std::string prof;     // profiler compiled in (ids engine, engine-prof)
  std::string noprof;   // profiler compiled out (id engine-noprof)
  std::string version;  // project version + git describe at configure time
};

EngineLibraries engine_libraries();

}  // namespace heapscope::harness
