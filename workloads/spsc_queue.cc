#include "workloads/spsc_queue.h"

#include <bit>
#include <new>

namespace heapscope::workloads {

bool QueueMatrix::init(unsigned threads, std::uint32_t capacity) {
  const std::uint32_t cap = std::bit_ceil(capacity < 2 ? 2u : capacity);
  const std::size_t n = std::size_t{threads} * threads;
  const std::size_t ring_bytes = n * sizeof(SpscRing);
  region_ = MmapRegion::map(ring_bytes + n * cap * sizeof(void*), MmapRegion::Commit::kPopulate);
  if (region_.data() == nullptr) return false;
  threads_ = threads;
  rings_ = region_.as<SpscRing>();
  auto** buffers = reinterpret_cast<void**>(region_.as<char>() + ring_bytes);
  for (std::size_t i = 0; i < n; ++i) {
    SpscRing* r = new (&rings_[i]) SpscRing();
    r->init(buffers + i * cap, cap);
  }
  return true;
}

}  // namespace heapscope::workloads
