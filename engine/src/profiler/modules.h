// Module enumeration shared by the text writer (MAPPED_LIBRARIES), the proto writer (Mapping
// table) and the symbolizer (which also needs each module's load bias).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace heapscope::prof {

// One executable PT_LOAD segment of a loaded module. Pointers are valid during the callback.
struct ModuleSegment {
  const char* path;      // absolute path of the file (the main executable's from /proc/self/exe)
  const char* build_id;  // lowercase hex of NT_GNU_BUILD_ID, "" if none
  uintptr_t start;       // load_bias + p_vaddr
  size_t size;           // p_memsz
  uint64_t file_offset;  // p_offset
  uintptr_t load_bias;   // dlpi_addr: runtime address minus link-time address
  bool is_main;
};

using ModuleSegmentFn = bool (*)(const ModuleSegment& segment, void* arg);

// Calls `fn` for every executable segment, main executable first, skipping the vDSO and
// nameless modules. Stops when `fn` returns false. Never allocates.
void for_each_module_segment(ModuleSegmentFn fn, void* arg);

}  // namespace heapscope::prof
