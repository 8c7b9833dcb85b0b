// The profiler's process-wide state: the lock, the built-in session, profiler memory and the
// generation counters that heaps compare on their slow path. Defined once here so every
// profiler file (and the core's hooks) names the same objects.
#include "profiler/prof_internal.h"

namespace heapscope::prof {

std::atomic<uint32_t> g_lock{0};
HS_THREAD_LOCAL(uint32_t, t_lock_held, 0);
HS_THREAD_LOCAL(uint32_t, t_suppress, 0);
Session g_session;
ProfMemory g_memory;
ProfMemory g_bitmap_memory;
std::atomic<uint64_t> g_generation{1};
std::atomic<uint64_t> g_seed_generation{1};
std::atomic<uint64_t> g_seed_for_generation{0};
std::atomic<hs_profiler_t*> g_process_profiler{nullptr};

}  // namespace heapscope::prof
