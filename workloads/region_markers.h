// Hooks around the timed region for the allocation-audit shim (workloads/tests/
// counting_shim.c). Looked up once, before timing, with dlsym(RTLD_DEFAULT); absent in
// normal runs, so calling them is a null check. The shim counts every allocator call
// made between begin and end, from any thread.
#pragma once

#include <cstdint>

extern "C" {
struct hs_shim_counts {
  std::uint64_t malloc, free, realloc, calloc, aligned;  // aligned: posix_memalign,
                                                         // aligned_alloc, memalign, valloc
};
}

namespace heapscope::workloads {

struct RegionMarkers {
  void (*begin)() = nullptr;
  void (*end)() = nullptr;
  void (*read)(hs_shim_counts*) = nullptr;

  static RegionMarkers lookup();
  bool present() const { return begin != nullptr && end != nullptr && read != nullptr; }
};

}  // namespace heapscope::workloads
