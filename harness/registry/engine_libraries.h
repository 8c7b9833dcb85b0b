// Where our own allocator libraries are. In order: the environment variables
// HEAPSCOPE_ENGINE_LIB and HEAPSCOPE_ENGINE_NOPROF_LIB (e.g. to test an older build); the
// installation hsbench runs from (<prefix>/bin/hsbench -> <prefix>/<libdir>/libheapscope.so.0);
// the build tree's libraries, which CMake bakes in without making hsbench depend on building
// them.
#pragma once

#include <string>

namespace heapscope::harness {

struct EngineLibraries {
  std::string prof;     // profiler compiled in (ids engine, engine-prof)
  std::string noprof;   // profiler compiled out (id engine-noprof)
  std::string version;  // project version + git describe at configure time
};

EngineLibraries engine_libraries();

// <prefix>/<relative> when it exists, where <prefix> is the parent of the directory holding
// the running executable (so /usr for /usr/bin/hsbench); "" otherwise. An absolute `relative`
// (an install directory configured as an absolute path) is taken as it is.
std::string installed_file(const std::string& relative);

// A private file of hsbench's (the `hsbench app` shim, its launcher): $<env_var> when set, else
// the installed <prefix>/<installed_relative> when it exists, else `build_tree_file`.
std::string private_file(const char* env_var, const std::string& installed_relative,
                         const std::string& build_tree_file);

}  // namespace heapscope::harness
