#include "workloads/region_markers.h"

#include <dlfcn.h>

namespace heapscope::workloads {

RegionMarkers RegionMarkers::lookup() {
  RegionMarkers m;
  m.begin = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "hs_shim_timed_region_begin"));
  m.end = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "hs_shim_timed_region_end"));
  m.read = reinterpret_cast<void (*)(hs_shim_counts*)>(dlsym(RTLD_DEFAULT, "hs_shim_read_counts"));
  if (!m.present()) m = RegionMarkers{};
  return m;
}

}  // namespace heapscope::workloads
