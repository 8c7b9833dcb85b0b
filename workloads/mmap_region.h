// Shared anonymous mappings for everything the harness keeps next to the timed loop
// (op streams, slot tables, queues), so none of it comes from the allocator under test.
// Shared, not private: their resident pages count as RssShmem, never as RssAnon, so the
// parent's RssAnon reading of the child is the allocator's memory without the (large)
// materialized stream (harness/docs/protocol.md#memory).
#pragma once

#include <cstddef>
#include <utility>

namespace heapscope::workloads {

class MmapRegion {
 public:
  enum class Commit { kLazy, kPopulate };  // kPopulate: no page faults in the timed loop

  MmapRegion() = default;
  // Empty region (data() == nullptr) on failure; bytes == 0 gives an empty region.
  static MmapRegion map(std::size_t bytes, Commit commit);

  MmapRegion(MmapRegion&& o) noexcept { swap(o); }
  MmapRegion& operator=(MmapRegion&& o) noexcept {
    MmapRegion tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  MmapRegion(const MmapRegion&) = delete;
  MmapRegion& operator=(const MmapRegion&) = delete;
  ~MmapRegion();

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void swap(MmapRegion& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace heapscope::workloads
