// The built-in profiler's public API (hs_prof_*): sessions and their configuration, the
// environment, statistics, visits, snapshots, dumps in both pprof formats, the exit dump,
// and fork handling.
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"
#include "profiler/prof_internal.h"
#include "profiler/profile_writer.h"

namespace heapscope::prof {

namespace {

// ---- environment --------------------------------------------------------------------------
// Decimal digits only (bytes, no suffixes); false if absent or malformed (with a warning).
bool env_u64(const char* name, uint64_t* out) {
  const char* text = os::get_env(name);
  if (text == nullptr || *text == '\0') return false;
  uint64_t value = 0;
  for (const char* s = text; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9' || value > (UINT64_MAX - 9) / 10) {
      warning("heapscope: ignoring a malformed HEAPSCOPE_PROF_* value (decimal expected)");
      return false;
    }
    value = value * 10 + static_cast<uint64_t>(*s - '0');
  }
  *out = value;
  return true;
}

bool env_bool(const char* name, bool* out) {
  const char* text = os::get_env(name);
  if (text == nullptr) return false;
  char c = text[0];
  *out = c == '1' || c == 'y' || c == 'Y' || c == 't' || c == 'T' || c == '\0' ||
         ((c == 'o' || c == 'O') && (text[1] == 'n' || text[1] == 'N'));
  return true;
}

bool equals_ignoring_case(const char* a, const char* b) {
  for (; *a != '\0' && *b != '\0'; ++a, ++b) {
    char x = (*a >= 'A' && *a <= 'Z') ? static_cast<char>(*a + 32) : *a;
    if (x != *b) return false;
  }
  return *a == *b;
}

bool env_format(const char* name, uint32_t* out) {
  const char* text = os::get_env(name);
  if (text == nullptr || *text == '\0') return false;
  if (equals_ignoring_case(text, "text") || equals_ignoring_case(text, "heap")) {
    *out = HS_PROF_FORMAT_TEXT;
  } else if (equals_ignoring_case(text, "proto") || equals_ignoring_case(text, "pb")) {
    *out = HS_PROF_FORMAT_PROTO;
  } else if (equals_ignoring_case(text, "proto-symbolized") ||
             equals_ignoring_case(text, "symbolized")) {
    *out = HS_PROF_FORMAT_PROTO_SYMBOLIZED;
  } else {
    warning("heapscope: HEAPSCOPE_PROF_DUMP_FORMAT must be text, proto or proto-symbolized");
    return false;
  }
  return true;
}

// ---- the exit dump --------------------------------------------------------------------------
char g_exit_path[4096];
uint32_t g_exit_format = HS_PROF_FORMAT_TEXT;

// ---- settings of one start ------------------------------------------------------------------
struct Settings {
  uint64_t interval = HS_PROF_DEFAULT_INTERVAL;
  uint64_t max_bytes = 0;
  uint64_t seed = 0;
  bool accum = false;
  uint32_t depth = HS_PROF_DEFAULT_STACK_DEPTH;
  bool exit_path_given = false;
  const char* exit_path = nullptr;
  bool exit_format_given = false;
  uint32_t exit_format = HS_PROF_FORMAT_TEXT;
};

// What the environment says, field by field (a field is "given" when its variable is set).
struct EnvSettings {
  bool has_interval, has_max_bytes, has_seed, has_accum, has_depth, has_exit_path, has_format;
  uint64_t interval, max_bytes, seed, depth;
  bool accum;
  const char* exit_path;
  uint32_t format;
};

EnvSettings read_environment() {
  EnvSettings env{};
  env.has_interval = env_u64("HEAPSCOPE_PROF_SAMPLE_INTERVAL", &env.interval) && env.interval > 0;
  env.has_max_bytes = env_u64("HEAPSCOPE_PROF_MAX_BYTES", &env.max_bytes);
  env.has_seed = env_u64("HEAPSCOPE_PROF_SEED", &env.seed);
  env.has_accum = env_bool("HEAPSCOPE_PROF_ACCUM", &env.accum);
  env.has_depth = env_u64("HEAPSCOPE_PROF_BT_MAX", &env.depth) && env.depth > 0;
  env.exit_path = os::get_env("HEAPSCOPE_PROF_DUMP_AT_EXIT");
  env.has_exit_path = env.exit_path != nullptr;
  env.has_format = env_format("HEAPSCOPE_PROF_DUMP_FORMAT", &env.format);
  return env;
}

uint32_t clamp_depth(uint64_t depth) {
  if (depth == 0) return HS_PROF_DEFAULT_STACK_DEPTH;
  return depth > HS_PROF_MAX_STACK_DEPTH ? HS_PROF_MAX_STACK_DEPTH : static_cast<uint32_t>(depth);
}

Settings settings_from_environment() {
  EnvSettings env = read_environment();
  Settings s;
  if (env.has_interval) s.interval = env.interval;
  if (env.has_max_bytes) s.max_bytes = env.max_bytes;
  if (env.has_seed) s.seed = env.seed;
  if (env.has_accum) s.accum = env.accum;
  if (env.has_depth) s.depth = clamp_depth(env.depth);
  s.exit_path_given = env.has_exit_path;
  s.exit_path = env.exit_path;
  s.exit_format_given = env.has_format;
  s.exit_format = env.format;
  return s;
}

bool copy_exit_path(const char* path) {
  if (path == nullptr) {
    g_exit_path[0] = '\0';
    return true;
  }
  size_t len = strlen(path);
  if (len >= sizeof g_exit_path) return false;
  memcpy(g_exit_path, path, len + 1);
  return true;
}

uint64_t draw_session_seed() {
  uint64_t seed = 0;
  while (seed == 0) seed = os::random_u64();
  return seed;
}

// Starts the built-in session. Caller must not hold the lock.
bool start_session(const Settings& s) {
  if (!HS_PROFILER || t_suppress != 0) return false;  // compiled out: never samples
  if (s.exit_path_given && s.exit_path != nullptr && strlen(s.exit_path) >= sizeof g_exit_path) {
    return false;
  }
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
    if (s.exit_path_given) copy_exit_path(s.exit_path);
    if (s.exit_format_given) g_exit_format = s.exit_format;
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

// ---- copies of the profile ----------------------------------------------------------------------
struct Copy {
  OsBuffer stacks;  // ProfileStack[]
  OsBuffer frames;  // uintptr_t[] of every stack, back to back
  bool ok = true;
};

bool copy_stack(const StackEntry* entry, void* arg) {
  auto* copy = static_cast<Copy*>(arg);
  ProfileStack stack{};
  // pcs holds the frame offset until the copy is complete (the buffer may still move).
  stack.pcs = reinterpret_cast<const uintptr_t*>(copy->frames.size());
  stack.depth = entry->depth;
  stack.live_objects = entry->live_objects;
  stack.live_bytes = entry->live_bytes;
  stack.accum_objects = entry->accum_objects;
  stack.accum_bytes = entry->accum_bytes;
  stack.live_objects_estimate = entry->live_objects_estimate;
  stack.live_bytes_estimate = entry->live_bytes_estimate;
  stack.accum_objects_estimate = entry->accum_objects_estimate;
  stack.accum_bytes_estimate = entry->accum_bytes_estimate;
  copy->ok = copy->ok && copy->frames.append(entry->pcs, entry->depth * sizeof(uintptr_t)) &&
             copy->stacks.append(&stack, sizeof stack);
  return copy->ok;
}

ProfileHeapStats heap_stats_now() {
  hs_stats_t s{};
  s.size = sizeof s;
  s.version = HS_STATS_VERSION;
  ProfileHeapStats out{};
  if (hs_stats_get(&s) != 0) return out;
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

// Copies the profile under the lock; fills `profile` to point into `copy`.
bool take_copy(Copy& copy, ProfileData& profile) {
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
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  profile.time_nanos = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  return true;
}

// Builds the whole profile in `out` (no lock held while formatting).
bool render(int format, OsBuffer& out) {
#if !HS_PROFILER
  (void)out;
  (void)format;
  return false;  // compiled out: there is no profile to write
#else
  if (format < HS_PROF_FORMAT_TEXT || format > HS_PROF_FORMAT_PROTO_SYMBOLIZED) return false;
  Copy copy;
  ProfileData profile;
  if (!take_copy(copy, profile)) return false;
  if (format == HS_PROF_FORMAT_TEXT) return write_text_profile(profile, out) && !out.failed();
  ProtoOptions options;
  options.symbolize = format == HS_PROF_FORMAT_PROTO_SYMBOLIZED;
  // The demangler allocates: never sample (or dead-lock on) what the dump itself allocates.
  t_suppress++;
  bool ok = write_proto_profile(profile, options, out) && !out.failed();
  t_suppress--;
  return ok;
#endif
}

bool write_to_path(const char* path, const OsBuffer& data) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const uint8_t* p = data.data();
  size_t left = data.size();
  bool ok = true;
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (close(fd) != 0) ok = false;
  return ok;
}

}  // namespace

bool dump_to_path(const char* path, int format) {
  if (path == nullptr || t_suppress != 0 || t_lock_held != 0) return false;
  OsBuffer out;
  if (!render(format, out)) return false;  // nothing is created for a profile never built
  return write_to_path(path, out);
}

bool dump_to_writer(int format, hs_prof_write_fn write, void* arg) {
  if (write == nullptr || t_suppress != 0 || t_lock_held != 0) return false;
  OsBuffer out;
  if (!render(format, out)) return false;
  constexpr size_t kPiece = 64 * 1024;
  for (size_t offset = 0; offset < out.size(); offset += kPiece) {
    size_t len = out.size() - offset < kPiece ? out.size() - offset : kPiece;
    if (!write(arg, out.data() + offset, len)) return false;
  }
  return true;
}

}  // namespace heapscope::prof

namespace heapscope {

using namespace prof;

void prof_process_init() {
  EnvSettings env = read_environment();
  if (env.has_exit_path) copy_exit_path(env.exit_path);
  if (env.has_format) g_exit_format = env.format;
  bool on = false;
  if (env_bool("HEAPSCOPE_PROF", &on) && on) {
    if (!start_session(settings_from_environment())) {
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
  }
}

}  // namespace heapscope

// ---- the exit dump
// -------------------------------------------------------------------------------- Runs at normal
// exit (or unload): a profile of what is still allocated, even if the profiler never ran (an empty
// profile), whenever HEAPSCOPE_PROF_DUMP_AT_EXIT or the config asked.
__attribute__((destructor)) static void heapscope_profiler_at_exit() {
  if (heapscope::prof::g_exit_path[0] == '\0') return;
  if (!heapscope::prof::dump_to_path(heapscope::prof::g_exit_path,
                                     static_cast<int>(heapscope::prof::g_exit_format))) {
    heapscope::warning("heapscope: could not write the profile at exit");
  }
}

using namespace heapscope;
using namespace heapscope::prof;

namespace {
Settings settings_for_start(size_t interval) {
  Settings s = settings_from_environment();
  if (interval != 0) s.interval = interval;  // an explicit interval ignores the environment
  s.exit_path_given = false;                 // the exit dump settings were read at start-up
  s.exit_format_given = false;
  return s;
}
}  // namespace

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
  EnvSettings env = read_environment();
  Settings s;
  auto resolve = [&](uint32_t field, bool env_has) {
    bool given = (config->fields & field) != 0;
    bool override = config->mode == HS_PROF_OVERRIDE || (config->override_fields & field) != 0;
    // 1: take the struct, 2: take the environment, 0: the default.
    if (given && (override || !env_has)) return 1;
    return env_has ? 2 : 0;
  };
  switch (resolve(HS_PROF_FIELD_SAMPLE_INTERVAL, env.has_interval)) {
    case 1:
      if (config->sample_interval == 0) return false;
      s.interval = config->sample_interval;
      break;
    case 2:
      s.interval = env.interval;
      break;
    default:
      break;
  }
  switch (resolve(HS_PROF_FIELD_MAX_BYTES, env.has_max_bytes)) {
    case 1:
      s.max_bytes = config->max_bytes;
      break;
    case 2:
      s.max_bytes = env.max_bytes;
      break;
    default:
      break;
  }
  switch (resolve(HS_PROF_FIELD_SEED, env.has_seed)) {
    case 1:
      s.seed = config->seed;
      break;
    case 2:
      s.seed = env.seed;
      break;
    default:
      break;
  }
  switch (resolve(HS_PROF_FIELD_ACCUM, env.has_accum)) {
    case 1:
      s.accum = config->accum != 0;
      break;
    case 2:
      s.accum = env.accum;
      break;
    default:
      break;
  }
  switch (resolve(HS_PROF_FIELD_STACK_DEPTH, env.has_depth)) {
    case 1:
      if (config->max_stack_depth == 0) return false;
      s.depth = clamp_depth(config->max_stack_depth);
      break;
    case 2:
      s.depth = clamp_depth(env.depth);
      break;
    default:
      break;
  }
  switch (resolve(HS_PROF_FIELD_DUMP_AT_EXIT, env.has_exit_path)) {
    case 1:
      s.exit_path_given = true;
      s.exit_path = config->dump_at_exit;
      break;
    case 2:
      s.exit_path_given = true;
      s.exit_path = env.exit_path;
      break;
    default:
      break;
  }
  switch (resolve(HS_PROF_FIELD_DUMP_FORMAT, env.has_format)) {
    case 1:
      if (config->dump_format > HS_PROF_FORMAT_PROTO_SYMBOLIZED) return false;
      s.exit_format_given = true;
      s.exit_format = config->dump_format;
      break;
    case 2:
      s.exit_format_given = true;
      s.exit_format = env.format;
      break;
    default:
      break;
  }
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

namespace {
bool zero_accum(const StackEntry* entry, void*) {
  auto* e = const_cast<StackEntry*>(entry);
  e->accum_objects = e->accum_bytes = 0;
  e->accum_objects_estimate = e->accum_bytes_estimate = 0;
  return true;
}
}  // namespace

HS_API void hs_prof_reset(void) {
  if (t_suppress != 0) return;
  LockGuard lock;
  for_each_stack(zero_accum, nullptr);
  g_session.accum_samples = g_session.accum_bytes = 0;
  sweep_released_stacks();
}

HS_API bool hs_prof_dump(const char* path) { return dump_to_path(path, HS_PROF_FORMAT_TEXT); }
HS_API bool hs_prof_dump_writer(hs_prof_write_fn write, void* arg) {
  return dump_to_writer(HS_PROF_FORMAT_TEXT, write, arg);
}
HS_API bool hs_prof_dump_proto(const char* path) {
  return dump_to_path(path, HS_PROF_FORMAT_PROTO);
}
HS_API bool hs_prof_dump_proto_writer(hs_prof_write_fn write, void* arg) {
  return dump_to_writer(HS_PROF_FORMAT_PROTO, write, arg);
}
HS_API bool hs_prof_dump_format(const char* path, int format) { return dump_to_path(path, format); }
HS_API bool hs_prof_dump_format_writer(int format, hs_prof_write_fn write, void* arg) {
  return dump_to_writer(format, write, arg);
}

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
  info.depth = entry->depth;
  info.live_objects = entry->live_objects;
  info.live_bytes = entry->live_bytes;
  info.accum_objects = entry->accum_objects;
  info.accum_bytes = entry->accum_bytes;
  info.live_objects_estimate = entry->live_objects_estimate;
  info.live_bytes_estimate = entry->live_bytes_estimate;
  info.accum_objects_estimate = entry->accum_objects_estimate;
  info.accum_bytes_estimate = entry->accum_bytes_estimate;
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

}  // extern "C"

// ---- snapshots: one OS mapping holding a copy of every stack ------------------------------------
struct hs_prof_snapshot_s {
  size_t mapped_bytes;
  size_t count;
  ProfileStack stacks[];  // followed by the frames
};

extern "C" {

HS_API hs_prof_snapshot_t* hs_prof_snapshot_new(void) {
  if (t_suppress != 0 || t_lock_held != 0) return nullptr;
  Copy copy;
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
    info.depth = stack.depth;
    info.live_objects = stack.live_objects;
    info.live_bytes = stack.live_bytes;
    info.accum_objects = stack.accum_objects;
    info.accum_bytes = stack.accum_bytes;
    info.live_objects_estimate = stack.live_objects_estimate;
    info.live_bytes_estimate = stack.live_bytes_estimate;
    info.accum_objects_estimate = stack.accum_objects_estimate;
    info.accum_bytes_estimate = stack.accum_bytes_estimate;
    if (!visit(&info, arg)) break;
  }
  return true;
}

HS_API void hs_prof_snapshot_free(hs_prof_snapshot_t* snapshot) {
  if (snapshot != nullptr) os::unmap(snapshot, snapshot->mapped_bytes);
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
