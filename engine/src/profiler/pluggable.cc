// Pluggable profilers (hs_profiler_t): a user profiler attached to one heap or to every heap
// receives that heap's samples through callbacks instead of the built-in profiler, with its
// own mean interval and optional per-sample user data stored with the sampled allocation.
// The same sampler drives them (Poisson distances, per-thread streams); records of their
// samples share the built-in record table, so frees find them the same O(1) way.
//
// Also the built-in pprof profiler object (hs_pprof_profiler_new): a profiler handle that
// runs the built-in session and writes numbered snapshot files, on demand and automatically.
#include <string.h>

#include <new>

#include "platform/platform.h"
#include "profiler/prof_internal.h"
#include "support/format.h"

namespace heapscope::prof {

namespace {

struct PprofProfiler;

// What heapscope keeps per user profiler (behind hs_profiler_t::reserved). Lives in
// never-released profiler memory, because heaps may still point at the profiler.
struct UserState {
  std::atomic<bool> started{false};
  std::atomic<uint64_t> interval{HS_PROF_DEFAULT_INTERVAL};
  std::atomic<uint32_t> snapshot_busy{0};
  PprofProfiler* pprof = nullptr;  // set for the built-in pprof profiler object
};

struct PprofProfiler {
  hs_profiler_t base;
  UserState state;
  char base_name[2048];
  bool text;
  uint64_t sample_interval;
  uint64_t alloc_interval, inuse_interval, time_interval_secs;
  std::atomic<uint64_t> sequence{0};
  // Thresholds for the next automatic snapshot (guarded by auto_lock).
  std::atomic<uint32_t> auto_lock{0};
  double next_alloc_estimate = 0;
  double last_inuse_estimate = 0;
  int64_t next_time_ms = 0;
};

std::atomic<PprofProfiler*> g_auto_pprof{nullptr};

UserState* state_of(hs_profiler_t* profiler) {
  auto* state = static_cast<UserState*>(__atomic_load_n(&profiler->reserved, __ATOMIC_ACQUIRE));
  if (state != nullptr) return state;
  LockGuard lock;
  state = static_cast<UserState*>(profiler->reserved);
  if (state == nullptr) {
    void* memory = g_bitmap_memory.allocate(sizeof(UserState));
    if (memory == nullptr) return nullptr;
    state = new (memory) UserState();
    uint64_t interval = profiler->initial_sample_interval;
    state->interval.store(interval != 0 ? interval : HS_PROF_DEFAULT_INTERVAL);
    __atomic_store_n(&profiler->reserved, state, __ATOMIC_RELEASE);
  }
  return state;
}

void bump_generation() {
  g_generation.fetch_add(1, std::memory_order_release);
  prof_rearm_own_heaps();
}

size_t data_bytes(const hs_profiler_t* profiler) {
  size_t size = profiler->sample_data_size;
  return size > HS_PROFILER_SAMPLE_DATA_MAX ? HS_PROFILER_SAMPLE_DATA_MAX : size;
}

}  // namespace

bool user_profiler_started(hs_profiler_t* profiler) {
  auto* state = static_cast<UserState*>(__atomic_load_n(&profiler->reserved, __ATOMIC_ACQUIRE));
  return state != nullptr && state->pprof == nullptr && state->started.load();
}

uint64_t user_profiler_interval(hs_profiler_t* profiler) {
  return static_cast<UserState*>(profiler->reserved)->interval.load(std::memory_order_relaxed);
}

void user_sample(hs_profiler_t* profiler, Heap* heap, void* p, size_t size, uint64_t interval) {
  UserState* state = state_of(profiler);
  if (state == nullptr || !state->started.load()) return;
  bool track = profiler->on_free != nullptr;
  size_t user_bytes = data_bytes(profiler);
  hs_profiler_sample_data_t* data = nullptr;
  if (track && user_bytes > 0) {
    LockGuard lock;
    data = static_cast<hs_profiler_sample_data_t*>(g_memory.allocate(sizeof(size_t) + user_bytes));
    if (data == nullptr) {
      g_session.dropped_no_memory++;
      return;
    }
    g_session.user_data_blocks++;
    memset(data, 0, sizeof(size_t) + user_bytes);
    data->user_data_size = user_bytes;
  }
  size_t next = 0;
  if (profiler->on_alloc != nullptr) {
    t_suppress++;
    next = profiler->on_alloc(profiler, data, p, size, interval, heap->prof_bytes_since_sample,
                              reinterpret_cast<hs_heap_t*>(heap));
    t_suppress--;
  }
  if (next != 0 && next != interval) {
    // A fresh exponential draw at any moment keeps the process Poisson (it is memoryless).
    state->interval.store(next);
    bump_generation();
  }
  if (!track) return;
  LockGuard lock;
  auto* record = static_cast<Record*>(g_memory.allocate(sizeof(Record)));
  if (record != nullptr) {
    *record = Record{};
    record->address = reinterpret_cast<uintptr_t>(p);
    record->size = size;
    record->weight = sample_weight(size, interval);
    record->owner = profiler;
    record->heap = reinterpret_cast<hs_heap_t*>(heap);
    record->data = data;
    record->data_size = static_cast<uint32_t>(user_bytes);
  }
  if (record == nullptr || !track_record(record)) {
    if (record != nullptr) g_memory.release(record, sizeof(Record));
    if (data != nullptr) {
      g_memory.release(data, sizeof(size_t) + user_bytes);
      g_session.user_data_blocks--;
    }
    g_session.dropped_no_memory++;
  }
}

void user_sample_freed(const Record& record) {
  hs_profiler_t* profiler = record.owner;
  if (profiler->on_free != nullptr) {
    t_suppress++;
    profiler->on_free(profiler, record.data, reinterpret_cast<void*>(record.address), record.heap);
    t_suppress--;
  }
  if (record.data != nullptr) {
    LockGuard lock;
    g_memory.release(record.data, sizeof(size_t) + record.data_size);
    g_session.user_data_blocks--;
  }
}

void user_sample_resized(const Record& record, uint64_t old_size, uint64_t new_size) {
  hs_profiler_t* profiler = record.owner;
  if (profiler == nullptr || profiler->on_realloc_inplace == nullptr) return;
  t_suppress++;
  size_t next =
      profiler->on_realloc_inplace(profiler, record.data, reinterpret_cast<void*>(record.address),
                                   old_size, new_size, record.heap);
  t_suppress--;
  UserState* state = state_of(profiler);
  if (state != nullptr && next != 0 && next != state->interval.load()) {
    state->interval.store(next);
    bump_generation();
  }
}

namespace {

struct OwnerScan {
  hs_profiler_t* owner;
  Record* found[64];
  size_t count;
};

bool take_owned(Record* record, void* arg) {
  auto* scan = static_cast<OwnerScan*>(arg);
  if (record->owner != scan->owner) return true;
  if (scan->count == 64) return false;
  untrack_record(record);
  scan->found[scan->count++] = record;
  return true;
}

// Forgets every sample of `profiler`, telling it through on_free.
void drop_samples_of(hs_profiler_t* profiler) {
  for (;;) {
    OwnerScan scan{profiler, {}, 0};
    {
      LockGuard lock;
      for_each_record_raw(take_owned, &scan);
    }
    for (size_t i = 0; i < scan.count; ++i) {
      user_sample_freed(*scan.found[i]);
      LockGuard lock;
      g_memory.release(scan.found[i], sizeof(Record));
    }
    if (scan.count < 64) return;
  }
}

// ---- the pprof profiler object --------------------------------------------------------------
bool write_pprof_snapshot(PprofProfiler* pprof) {
  char path[sizeof pprof->base_name + 48];
  uint64_t sequence = pprof->sequence.fetch_add(1) + 1;
  const char* extension = pprof->text ? "heap" : "pb.gz";
  size_t len = strlen(pprof->base_name);
  memcpy(path, pprof->base_name, len);
  path[len++] = '.';
  len += fmt::decimal(sequence, path + len, 4);
  path[len++] = '.';
  size_t extension_len = strlen(extension);
  memcpy(path + len, extension, extension_len + 1);
  return dump_to_path(path, pprof->text ? HS_PROF_FORMAT_TEXT : HS_PROF_FORMAT_PROTO);
}

void pprof_on_snapshot(hs_profiler_t* profiler) {
  write_pprof_snapshot(reinterpret_cast<PprofProfiler*>(profiler));
}

}  // namespace

void pprof_auto_snapshot_check() {
  PprofProfiler* pprof = g_auto_pprof.load(std::memory_order_acquire);
  if (pprof == nullptr || t_suppress != 0 || t_lock_held != 0) return;
  if (pprof->auto_lock.exchange(1, std::memory_order_acquire) != 0) return;  // someone is on it
  double allocated, inuse;
  {
    LockGuard lock;
    allocated = g_session.allocated_bytes_estimate;
    inuse = g_session.live_bytes_estimate;
  }
  bool due = false;
  if (pprof->alloc_interval != 0 && allocated >= pprof->next_alloc_estimate) {
    due = true;
    pprof->next_alloc_estimate = allocated + static_cast<double>(pprof->alloc_interval);
  }
  if (pprof->inuse_interval != 0 &&
      inuse >= pprof->last_inuse_estimate + static_cast<double>(pprof->inuse_interval)) {
    due = true;
    pprof->last_inuse_estimate = inuse;
  }
  if (pprof->time_interval_secs != 0 && os::now_ms() >= pprof->next_time_ms) {
    due = true;
    pprof->next_time_ms = os::now_ms() + static_cast<int64_t>(pprof->time_interval_secs) * 1000;
  }
  if (due) write_pprof_snapshot(pprof);
  pprof->auto_lock.store(0, std::memory_order_release);
}

}  // namespace heapscope::prof

using namespace heapscope;
using namespace heapscope::prof;

extern "C" {

HS_API bool hs_heap_profile(hs_heap_t* handle, hs_profiler_t* profiler) {
  if (handle == nullptr || t_suppress != 0) return false;
  if (profiler != nullptr && state_of(profiler) == nullptr) return false;
  auto* heap = reinterpret_cast<Heap*>(handle);
  __atomic_store_n(&heap->attached_profiler, profiler, __ATOMIC_RELEASE);
  bump_generation();
  return true;
}

HS_API void hs_heap_profile_disable(hs_heap_t* handle) {
  if (handle == nullptr) return;
  auto* heap = reinterpret_cast<Heap*>(handle);
  __atomic_store_n(&heap->profile_disabled, true, __ATOMIC_RELEASE);
  bump_generation();
}

HS_API bool hs_profile(hs_profiler_t* profiler) {
  if (t_suppress != 0) return false;
  if (profiler != nullptr && state_of(profiler) == nullptr) return false;
  g_process_profiler.store(profiler, std::memory_order_release);
  bump_generation();
  return true;
}

HS_API bool hs_profiler_start(hs_profiler_t* profiler) {
  if (!HS_PROFILER || profiler == nullptr || t_suppress != 0) return false;
  UserState* state = state_of(profiler);
  if (state == nullptr) return false;
  if (state->pprof != nullptr) {
    PprofProfiler* pprof = state->pprof;
    if (!hs_prof_start(pprof->sample_interval)) return false;
    pprof->next_alloc_estimate = static_cast<double>(pprof->alloc_interval);
    pprof->last_inuse_estimate = 0;
    pprof->next_time_ms = os::now_ms() + static_cast<int64_t>(pprof->time_interval_secs) * 1000;
    state->started.store(true);
    g_auto_pprof.store(pprof, std::memory_order_release);
    return true;
  }
  if (state->started.exchange(true)) return false;
  bump_generation();
  return true;
}

HS_API bool hs_profiler_stop(hs_profiler_t* profiler) {
  if (profiler == nullptr || t_suppress != 0) return false;
  UserState* state = state_of(profiler);
  if (state == nullptr || !state->started.exchange(false)) return false;
  if (state->pprof != nullptr) {
    g_auto_pprof.store(nullptr, std::memory_order_release);
    hs_prof_stop();
    return true;
  }
  bump_generation();
  drop_samples_of(profiler);
  return true;
}

HS_API void hs_profiler_snapshot(hs_profiler_t* profiler) {
  if (profiler == nullptr || profiler->on_snapshot == nullptr || t_suppress != 0) return;
  UserState* state = state_of(profiler);
  if (state == nullptr || state->snapshot_busy.exchange(1) != 0) return;  // one at a time
  profiler->on_snapshot(profiler);
  state->snapshot_busy.store(0);
}

HS_API hs_profiler_t* hs_pprof_profiler_new(size_t sample_interval, const char* base_file_name,
                                            size_t alloc_interval, size_t inuse_interval,
                                            size_t time_interval_secs) {
  if (base_file_name == nullptr || t_suppress != 0) return nullptr;
  size_t len = strlen(base_file_name);
  void* memory = os::map_aligned((sizeof(PprofProfiler) + 4095) & ~size_t{4095}, os::page_size());
  if (memory == nullptr) return nullptr;
  auto* pprof = new (memory) PprofProfiler();
  bool text = false;
  if (len >= 5 && (strcmp(base_file_name + len - 5, ".heap") == 0 ||
                   strcmp(base_file_name + len - 5, ".text") == 0)) {
    text = true;
    len -= 5;
  }
  if (len == 0 || len >= sizeof pprof->base_name) {
    os::unmap(memory, (sizeof(PprofProfiler) + 4095) & ~size_t{4095});
    return nullptr;
  }
  memcpy(pprof->base_name, base_file_name, len);
  pprof->base_name[len] = '\0';
  pprof->text = text;
  pprof->sample_interval = sample_interval != 0 ? sample_interval : HS_PROF_DEFAULT_INTERVAL;
  pprof->alloc_interval = alloc_interval;
  pprof->inuse_interval = inuse_interval;
  pprof->time_interval_secs = time_interval_secs;
  pprof->state.pprof = pprof;
  pprof->state.interval.store(pprof->sample_interval);
  pprof->base.reserved = &pprof->state;
  pprof->base.initial_sample_interval = pprof->sample_interval;
  pprof->base.on_snapshot = pprof_on_snapshot;
  return &pprof->base;
}

HS_API void hs_pprof_profiler_delete(hs_profiler_t* profiler) {
  if (profiler == nullptr) return;
  UserState* state = static_cast<UserState*>(profiler->reserved);
  if (state == nullptr || state->pprof == nullptr) return;
  if (state->started.load()) (void)hs_profiler_stop(profiler);
  os::unmap(state->pprof, (sizeof(PprofProfiler) + 4095) & ~size_t{4095});
}

}  // extern "C"
