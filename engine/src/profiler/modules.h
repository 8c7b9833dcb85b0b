// Module enumeration shared by the text writer (MAPPED_LIBRARIES), the proto writer (Mapping
// table) and the symbolizer (which also needs each module's load bias). The walk itself is
// OS-specific and lives in the platform layer.
#pragma once

#include "platform/platform.h"

namespace heapscope::prof {

// One executable segment of a loaded module; pointers are valid during the callback.
using ModuleSegment = os::ModuleSegment;
using ModuleSegmentFn = os::ModuleSegmentFn;

// Calls `fn` for every executable segment, main executable first, skipping the vDSO and
// nameless modules. Stops when `fn` returns false. Never allocates.
using os::for_each_module_segment;

}  // namespace heapscope::prof
