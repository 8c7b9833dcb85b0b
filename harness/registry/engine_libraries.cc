#include "harness/registry/engine_libraries.h"

#include <cstdlib>

#ifndef HS_ENGINE_LIB
#define HS_ENGINE_LIB ""
#endif
#ifndef HS_ENGINE_NOPROF_LIB
#define HS_ENGINE_NOPROF_LIB ""
#endif
#ifndef HS_ENGINE_VERSION
#define HS_ENGINE_VERSION "unknown"
#endif

namespace heapscope::harness {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

EngineLibraries engine_libraries() {
  return {env_or("HEAPSCOPE_ENGINE_LIB", HS_ENGINE_LIB),
          env_or("HEAPSCOPE_ENGINE_NOPROF_LIB", HS_ENGINE_NOPROF_LIB), HS_ENGINE_VERSION};
}

}  // namespace heapscope::harness
