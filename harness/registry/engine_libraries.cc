#include "harness/registry/engine_libraries.h"

#include <cstdlib>
#include <filesystem>

#ifndef HS_ENGINE_LIB
#define HS_ENGINE_LIB ""
#endif
#ifndef HS_ENGINE_NOPROF_LIB
#define HS_ENGINE_NOPROF_LIB ""
#endif
#ifndef HS_ENGINE_VERSION
#define HS_ENGINE_VERSION "unknown"
#endif
#ifndef HS_INSTALL_LIBDIR
#define HS_INSTALL_LIBDIR "lib"
#endif

namespace heapscope::harness {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// The installed library beside this executable wins over the build tree's: an installed hsbench
// must measure the engine it was installed with, not one left in a build directory.
std::string engine_file(const char* soname, const char* build_tree_file) {
  const std::string installed = installed_file(std::string(HS_INSTALL_LIBDIR) + "/" + soname);
  return installed.empty() ? build_tree_file : installed;
}

}  // namespace

std::string installed_file(const std::string& relative) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path file(relative);
  if (file.is_relative()) {
    // canonical: the real executable, even when started through a symbolic link elsewhere.
    const fs::path exe = fs::canonical("/proc/self/exe", ec);
    if (ec) return "";
    file = exe.parent_path().parent_path() / file;
  }
  return fs::is_regular_file(file, ec) ? file.lexically_normal().string() : "";
}

EngineLibraries engine_libraries() {
  return {env_or("HEAPSCOPE_ENGINE_LIB", engine_file("libheapscope.so.0", HS_ENGINE_LIB)),
          env_or("HEAPSCOPE_ENGINE_NOPROF_LIB",
                 engine_file("libheapscope_noprof.so.0", HS_ENGINE_NOPROF_LIB)),
          HS_ENGINE_VERSION};
}

std::string private_file(const char* env_var, const std::string& installed_relative,
                         const std::string& build_tree_file) {
  const char* value = std::getenv(env_var);
  if (value != nullptr && *value != '\0') return value;
  // An installed hsbench uses the files installed with it (see engine_libraries.h).
  std::string installed = installed_file(installed_relative);
  return installed.empty() ? build_tree_file : installed;
}

}  // namespace heapscope::harness
