// Snapshots: one OS mapping holding a copy of every stack, visited and freed by the caller
// at leisure (no lock, no allocator).
#include <string.h>

#include "platform/platform.h"
#include "profiler/prof_internal.h"
#include "profiler/profile_copy.h"

using namespace heapscope;
using namespace heapscope::prof;

struct hs_prof_snapshot_s {
  size_t mapped_bytes;
  size_t count;
  ProfileStack stacks[];  // followed by the frames
};

extern "C" {

HS_API hs_prof_snapshot_t* hs_prof_snapshot_new(void) {
  if (t_suppress != 0 || t_lock_held != 0) return nullptr;
  ProfileCopy copy;
  ProfileData profile;
  if (!take_copy(copy, profile)) return nullptr;
  size_t header = sizeof(hs_prof_snapshot_t) + copy.stacks.size();
  size_t total = header + copy.frames.size();
  size_t page = os::page_size();
  total = (total + page - 1) & ~(page - 1);
  void* memory = os::map_aligned(total, page);
  if (memory == nullptr) return nullptr;
  auto* snapshot = static_cast<hs_prof_snapshot_t*>(memory);
  snapshot->mapped_bytes = total;
  snapshot->count = profile.stack_count;
  auto* frames = reinterpret_cast<uintptr_t*>(static_cast<uint8_t*>(memory) + header);
  if (copy.frames.size() != 0) memcpy(frames, copy.frames.data(), copy.frames.size());
  const uintptr_t* old_frames = reinterpret_cast<const uintptr_t*>(copy.frames.data());
  for (size_t i = 0; i < profile.stack_count; ++i) {
    snapshot->stacks[i] = profile.stacks[i];
    snapshot->stacks[i].pcs = frames + (profile.stacks[i].pcs - old_frames);
  }
  return snapshot;
}

HS_API bool hs_prof_snapshot_visit(const hs_prof_snapshot_t* snapshot, hs_prof_visit_fn visit,
                                   void* arg) {
  if (snapshot == nullptr || visit == nullptr) return false;
  for (size_t i = 0; i < snapshot->count; ++i) {
    const ProfileStack& stack = snapshot->stacks[i];
    hs_prof_sample_info_t info{};
    info.stack = reinterpret_cast<const void* const*>(stack.pcs);
    copy_stack_counts(info, stack);
    if (!visit(&info, arg)) break;
  }
  return true;
}

HS_API void hs_prof_snapshot_free(hs_prof_snapshot_t* snapshot) {
  if (snapshot != nullptr) os::unmap(snapshot, snapshot->mapped_bytes);
}

}  // extern "C"
