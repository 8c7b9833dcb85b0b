// Reading the built-in profile in place: its statistics, a visit of every stack under the
// lock, and the loaded modules.
#include <string.h>

#include "profiler/prof_internal.h"
#include "profiler/profile_writer.h"

using namespace heapscope;
using namespace heapscope::prof;

extern "C" {

HS_API bool hs_prof_stats_get(hs_prof_stats_t* out) {
  if (out == nullptr || t_suppress != 0 || out->version < 1 ||
      out->version > HS_PROF_STATS_VERSION || out->size < sizeof(hs_prof_stats_t)) {
    return false;
  }
  hs_prof_stats_t s{};
  s.size = out->size;
  s.version = out->version;
  {
    LockGuard lock;
    s.enabled = g_session.enabled.load(std::memory_order_relaxed) ? 1 : 0;
    s.accum = g_session.accum ? 1 : 0;
    s.max_stack_depth = static_cast<uint16_t>(g_session.max_stack_depth);
    s.sample_interval = g_session.interval;
    s.seed = g_session.seed;
    s.live_samples = g_session.live_samples;
    s.live_bytes = g_session.live_bytes;
    s.accum_samples = g_session.accum_samples;
    s.accum_bytes = g_session.accum_bytes;
    s.live_objects_estimate = g_session.live_objects_estimate;
    s.live_bytes_estimate = g_session.live_bytes_estimate;
    s.unique_stacks = stack_count();
    // Bitmaps count while a page holds one (idle ones wait on a free list for reuse).
    s.profiler_bytes = g_memory.committed() + g_bitmap_memory.in_use();
    s.max_bytes = g_memory.budget();
    s.dropped_no_memory = g_session.dropped_no_memory;
    s.dropped_empty_stack = g_session.dropped_empty_stack;
    s.dropped_samples = s.dropped_no_memory + s.dropped_empty_stack;
    s.total_samples = g_session.total_samples;
  }
  // Version 1 is the whole struct today; a later version writes only up to the caller's.
  memcpy(out, &s, sizeof(hs_prof_stats_t));
  return true;
}

namespace {
struct VisitState {
  hs_prof_visit_fn visit;
  void* arg;
};
bool visit_entry(const StackEntry* entry, void* arg) {
  auto* state = static_cast<VisitState*>(arg);
  hs_prof_sample_info_t info{};
  info.stack = reinterpret_cast<const void* const*>(entry->pcs);
  copy_stack_counts(info, *entry);
  return state->visit(&info, state->arg);
}
}  // namespace

HS_API bool hs_prof_visit(hs_prof_visit_fn visit, void* arg) {
  if (visit == nullptr || t_suppress != 0 || t_lock_held != 0) return false;
  VisitState state{visit, arg};
  LockGuard lock;
  g_session.visiting++;
  t_suppress++;
  for_each_stack(visit_entry, &state);
  t_suppress--;
  g_session.visiting--;
  sweep_released_stacks();
  return true;
}

HS_API bool hs_prof_modules_visit(hs_prof_module_visit_fn visit, void* arg) {
  if (visit == nullptr || t_suppress != 0) return false;
#if HS_PROFILER
  return visit_modules(visit, arg);
#else
  return (void)arg, false;
#endif
}

}  // extern "C"
