#include "workloads/live_bytes.h"

#include <algorithm>

#include "workloads/fatal.h"
#include "workloads/mmap_region.h"

namespace heapscope::workloads {

std::uint64_t peak_live_bytes(const Stream& s) {
  // The slot table is mmap'd, not malloc'd: this runs in the child under the allocator
  // being measured, before the baseline is read.
  const MmapRegion table =
      MmapRegion::map(std::size_t{s.slots} * sizeof(std::uint64_t), MmapRegion::Commit::kLazy);
  HS_WL_CHECK(table.data() != nullptr || s.slots == 0, "cannot mmap the live-bytes table");
  auto* size_of = table.as<std::uint64_t>();
  std::uint64_t live = 0, peak = 0;
  for (std::size_t i = 0; i < s.size; ++i) {
    const Op op = s.ops[i];
    switch (op.kind()) {
      case OpKind::kMalloc:
      case OpKind::kCalloc:
      case OpKind::kAligned:
      case OpKind::kRealloc:
        live = live - size_of[op.slot()] + op.size();
        size_of[op.slot()] = op.size();
        break;
      case OpKind::kFree:
        live -= size_of[op.slot()];
        size_of[op.slot()] = 0;
        break;
      case OpKind::kSend:
      case OpKind::kDrain:
      case OpKind::kGenerationEnd:
        break;
    }
    peak = std::max(peak, live);
  }
  return peak;
}

std::uint64_t peak_live_bytes(const std::vector<Stream>& streams) {
  std::uint64_t sum = 0;
  for (const Stream& s : streams) sum += peak_live_bytes(s);
  return sum;
}

}  // namespace heapscope::workloads
