#include "workloads/mmap_region.h"

#include <sys/mman.h>

namespace heapscope::workloads {

MmapRegion MmapRegion::map(std::size_t bytes, Commit commit) {
  MmapRegion r;
  if (bytes == 0) return r;
  int flags = MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE;
  if (commit == Commit::kPopulate) flags |= MAP_POPULATE;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) return r;
  r.data_ = p;
  r.size_ = bytes;
  return r;
}

MmapRegion::~MmapRegion() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace heapscope::workloads
