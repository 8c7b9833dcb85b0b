#include "profiler/profile_copy.h"

#include "core/stats.h"
#include "platform/platform.h"
#include "profiler/prof_internal.h"

namespace heapscope::prof {

namespace {

bool copy_stack(const StackEntry* entry, void* arg) {
  auto* copy = static_cast<ProfileCopy*>(arg);
  ProfileStack stack{};
  // pcs holds the frame offset until the copy is complete (the buffer may still move).
  stack.pcs = reinterpret_cast<const uintptr_t*>(copy->frames.size());
  copy_stack_counts(stack, *entry);
  copy->ok = copy->ok && copy->frames.append(entry->pcs, entry->depth * sizeof(uintptr_t)) &&
             copy->stacks.append(&stack, sizeof stack);
  return copy->ok;
}

ProfileHeapStats heap_stats_now() {
  hs_stats_t s{};
  s.size = sizeof s;
  s.version = HS_STATS_VERSION;
  ProfileHeapStats out{};
  if (stats_get(&s, false) != 0) return out;  // may run inside an allocation (a peak copy)
  out.committed_bytes = s.committed_bytes;
  out.reserved_bytes = s.reserved_bytes;
  out.allocated_bytes = s.allocated_bytes;
  out.requested_bytes = s.requested_bytes;
  out.alloc_count = s.alloc_count;
  out.free_count = s.free_count;
  out.pages = s.pages;
  out.heaps = s.heaps;
  out.threads = s.threads;
  out.purged_bytes = s.purged_bytes;
  return out;
}

}  // namespace

bool take_copy(ProfileCopy& copy, ProfileData& profile) {
  profile = ProfileData{};
  profile.heap = heap_stats_now();  // allocator locks: never while holding the profiler's
  {
    LockGuard lock;
    for_each_stack(copy_stack, &copy);
    profile.sample_interval = __atomic_load_n(&g_session.interval, __ATOMIC_RELAXED);
    profile.accum = g_session.accum;
    profile.dropped_samples = g_session.dropped_no_memory + g_session.dropped_empty_stack;
    profile.stack_table_overflows = g_session.stack_table_overflows;
  }
  if (!copy.ok) return false;
  size_t count = copy.stacks.size() / sizeof(ProfileStack);
  auto* stacks = reinterpret_cast<ProfileStack*>(copy.stacks.data());
  auto* frames = reinterpret_cast<const uintptr_t*>(copy.frames.data());
  for (size_t i = 0; i < count; ++i) {
    stacks[i].pcs = frames + reinterpret_cast<uintptr_t>(stacks[i].pcs) / sizeof(uintptr_t);
  }
  profile.stacks = stacks;
  profile.stack_count = count;
  profile.time_nanos = os::realtime_ns();
  return true;
}

}  // namespace heapscope::prof
