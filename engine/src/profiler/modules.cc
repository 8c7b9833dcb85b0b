// The profiler's view of loaded modules: the platform's enumeration (os::for_each_module_segment)
// under the profiler's names, and the public hs_prof_visit_modules adaptor.
#include "profiler/modules.h"

#include "core/common.h"

#if HS_PROFILER

#include "profiler/profile_writer.h"

namespace heapscope::prof {
namespace {

struct PublicVisit {
  hs_prof_module_visit_fn visit;
  void* arg;
};

bool visit_public(const ModuleSegment& segment, void* arg) {
  auto* visit = static_cast<PublicVisit*>(arg);
  hs_prof_module_info_t info{
      .path = segment.path,
      .start = segment.start,
      .size = segment.size,
      .file_offset = segment.file_offset,
      .build_id = segment.build_id,
      .is_main = segment.is_main ? 1 : 0,
  };
  return visit->visit(&info, visit->arg);
}

}  // namespace

bool visit_modules(hs_prof_module_visit_fn visit, void* arg) {
  if (visit == nullptr) return false;
  PublicVisit state{visit, arg};
  for_each_module_segment(visit_public, &state);
  return true;
}

}  // namespace heapscope::prof

#endif  // HS_PROFILER
