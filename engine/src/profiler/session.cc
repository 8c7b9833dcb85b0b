// The built-in session's life cycle: start (from the environment at start-up, an interval, a
// seed or a config), stop, reset of the cumulative counts, and the lock across fork.
#include "platform/platform.h"
#include "profiler/config.h"
#include "profiler/dump.h"
#include "profiler/interval_dumps.h"
#include "profiler/peak.h"
#include "profiler/prof_internal.h"

namespace heapscope::prof {

namespace {

uint64_t draw_session_seed() {
  uint64_t seed = 0;
  while (seed == 0) seed = os::random_u64();
  return seed;
}

// Starts the built-in session. Caller must not hold the lock.
bool start_session(const Settings& s) {
  if (!HS_PROFILER || t_suppress != 0) return false;  // compiled out: never samples
  if (s.exit_path_given && !exit_dump_path_fits(s.exit_path)) return false;
  if (g_session.enabled.load(std::memory_order_acquire)) return false;
  peak_reset();  // a new session has a new peak
  {
    LockGuard lock;
    if (g_session.enabled.load(std::memory_order_relaxed)) return false;
    uint64_t seed = s.seed != 0 ? s.seed : draw_session_seed();
    __atomic_store_n(&g_session.interval, s.interval == 0 ? 1 : s.interval, __ATOMIC_RELAXED);
    g_session.seed = seed;
    g_session.accum = s.accum;
    __atomic_store_n(&g_session.max_stack_depth, clamp_depth(s.depth), __ATOMIC_RELAXED);
    g_session.total_samples = 0;
    g_session.dropped_no_memory = g_session.dropped_empty_stack = 0;
    g_session.stack_table_overflows = 0;
    g_session.live_samples = g_session.live_bytes = 0;
    g_session.accum_samples = g_session.accum_bytes = 0;
    g_session.live_objects_estimate = g_session.live_bytes_estimate = 0;
    g_memory.set_budget(s.max_bytes);
    g_memory.share_budget(&g_bitmap_memory);
    set_exit_dump(s);
    g_seed_for_generation.store(seed, std::memory_order_relaxed);
    g_seed_generation.fetch_add(1, std::memory_order_release);
    g_session.enabled.store(true, std::memory_order_release);
    g_generation.fetch_add(1, std::memory_order_release);
  }
  prof_rearm_own_heaps();
  return true;
}

bool drop_builtin(Record* record, void*) {
  if (record->owner == nullptr) drop_record(record);
  return true;
}

bool zero_accum(const StackEntry* entry, void*) {
  auto* e = const_cast<StackEntry*>(entry);
  e->accum_objects = e->accum_bytes = 0;
  e->accum_objects_estimate = e->accum_bytes_estimate = 0;
  return true;
}

}  // namespace

}  // namespace heapscope::prof

namespace heapscope {

using namespace prof;

HS_HOT_TEXT void prof_process_init() {
  Settings environment = settings_from_environment();
  set_exit_dump(environment);
  interval_dumps_configure(environment);
  if (environment_requests_profiling()) {
    // A session started by HEAPSCOPE_PROF=1 is usually read once, at exit, when a program
    // that frees its data has nothing in use left: it keeps the cumulative counts
    // (alloc_space/alloc_objects) unless HEAPSCOPE_PROF_ACCUM=0. Their cost is on sampled
    // allocations only, plus the stacks they keep (within the profiler's byte budget).
    if (!environment.accum_given) environment.accum = true;
    if (!start_session(environment)) {
      warning("heapscope: HEAPSCOPE_PROF=1 but the profiler could not start");
    }
  }
}

void prof_fork(int phase) {
  if (phase == 0) {
    spin_lock(g_lock);
  } else if (phase == 1) {
    spin_unlock(g_lock);
  } else {
    // The child's only thread is the one that forked; sampling goes on in the child.
    g_lock.store(0, std::memory_order_relaxed);
    peak_fork_child();
  }
}

}  // namespace heapscope

using namespace heapscope;
using namespace heapscope::prof;

extern "C" {

HS_API bool hs_prof_start(size_t interval) { return start_session(settings_for_start(interval)); }

HS_API bool hs_prof_start_seeded(size_t interval, uint64_t seed) {
  Settings s = settings_for_start(interval);
  s.seed = seed;  // explicit, even 0 (a random session seed), whatever the environment says
  return start_session(s);
}

HS_API bool hs_prof_start_ex(const hs_prof_config_t* config) {
  if (config == nullptr) return hs_prof_start(0);
  // Accept any published version whose layout the caller's size covers.
  if (config->version < 1 || config->version > HS_PROF_CONFIG_VERSION ||
      config->size < sizeof(hs_prof_config_t)) {
    return false;
  }
  if (config->mode != HS_PROF_FALLBACK && config->mode != HS_PROF_OVERRIDE) return false;
  Settings s;
  if (!settings_from_config(*config, &s)) return false;
  return start_session(s);
}

HS_API void hs_prof_stop(void) {
  if (t_suppress != 0) return;
  {
    LockGuard lock;
    if (!g_session.enabled.load(std::memory_order_relaxed)) return;
    g_session.enabled.store(false, std::memory_order_release);
    g_generation.fetch_add(1, std::memory_order_release);
    for_each_record_raw(drop_builtin, nullptr);
    g_session.live_samples = g_session.live_bytes = 0;
    g_session.accum_samples = g_session.accum_bytes = 0;
    g_session.live_objects_estimate = g_session.live_bytes_estimate = 0;
    g_session.accum = false;  // so the sweep below lets the kept cumulative stacks go
    sweep_released_stacks();
    if (record_count() == 0 && stack_count() == 0 && g_session.user_data_blocks == 0) {
      // Nothing of a user profiler is left either: hand every chunk back to the OS.
      tables_release();
      g_memory.release_everything();
    }
  }
  prof_rearm_own_heaps();
}

HS_API bool hs_prof_is_enabled(void) { return g_session.enabled.load(std::memory_order_relaxed); }

HS_API void hs_prof_reset(void) {
  if (t_suppress != 0) return;
  LockGuard lock;
  for_each_stack(zero_accum, nullptr);
  g_session.accum_samples = g_session.accum_bytes = 0;
  sweep_released_stacks();
}

}  // extern "C"
