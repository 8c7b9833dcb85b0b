// The page descriptor of a small or medium block, read the way free's fast path reads it:
// its slice's entry in the segment header, stepped back to the span's first slice.
#pragma once

#include <cstdint>

#include "core/page.h"
#include "core/segment.h"

namespace hs_internal_test {

inline heapscope::Page* page_of_block(void* p) {
  auto address = reinterpret_cast<uintptr_t>(p);
  auto* segment = reinterpret_cast<heapscope::Segment*>(address & ~heapscope::kSegmentMask);
  size_t slice = (address & heapscope::kSegmentMask) >> heapscope::kSliceShift;
  heapscope::Page* page = &segment->pages[slice];
  return page - page->slice_back;
}

}  // namespace hs_internal_test
