// heapscope engine: the sampled heap profiler (contract: engine/docs/design.md#profiler-contract).
//
// Off by default at zero cost: a build with the profiler compiled in does not sample until
// hs_prof_start* is called or HEAPSCOPE_PROF=1 is set. While running, allocations are sampled
// as a Poisson process over allocated bytes (mean distance = the sample interval), each sample
// remembers its allocation stack, and the live samples can be dumped in the two formats
// google/pprof reads (text heap_v2 and profile.proto), visited, or copied into a snapshot.
//
// Environment (read when the profiler starts; see the config rules below):
//   HEAPSCOPE_PROF=1                      start at process start-up
//   HEAPSCOPE_PROF_SAMPLE_INTERVAL=N      mean bytes between samples (default 524288)
//   HEAPSCOPE_PROF_ACCUM=1                also keep cumulative (alloc_*) counts
//   HEAPSCOPE_PROF_BT_MAX=N               stack depth (default 32, at most 128)
//   HEAPSCOPE_PROF_MAX_BYTES=N            profiler memory budget in bytes (0 = unlimited)
//   HEAPSCOPE_PROF_SEED=N                 sampling seed (0 = truly random)
//   HEAPSCOPE_PROF_DUMP_AT_EXIT=path      write a profile when the process exits
//   HEAPSCOPE_PROF_DUMP_FORMAT=text|proto|proto-symbolized   format of that exit dump
//
// Every function is safe to call from any thread. Calls made from inside a visitor callback
// (hs_prof_visit) fail fast (return false / NULL / do nothing).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "heapscope/heapscope.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__cplusplus) && __cplusplus >= 201703L
#define HS_NODISCARD [[nodiscard]]
#elif defined(__GNUC__)
#define HS_NODISCARD __attribute__((warn_unused_result))
#else
#define HS_NODISCARD
#endif

#define HS_PROF_DEFAULT_INTERVAL 524288
#define HS_PROF_DEFAULT_STACK_DEPTH 32
#define HS_PROF_MAX_STACK_DEPTH 128

// ---- output formats ----------------------------------------------------------------------------
typedef enum hs_prof_format_e {
  HS_PROF_FORMAT_TEXT = 0,   // gperftools heap_v2 text: raw sampled counts, MAPPED_LIBRARIES
  HS_PROF_FORMAT_PROTO = 1,  // profile.proto (gzip-compressed), unsampled values, mappings
  HS_PROF_FORMAT_PROTO_SYMBOLIZED = 2,  // as PROTO plus function names (C++ demangled)
} hs_prof_format_t;

// ---- configuration -----------------------------------------------------------------------------
// Size/version tagged; declare with HS_PROF_CONFIG_INIT so size and version are filled in.
// A field counts as given only if its HS_PROF_FIELD_* bit is set in `fields`, so every value,
// including 0/false/text, can be requested explicitly.
// Resolution, field by field: a field resolved as OVERRIDE takes the struct's value if given,
// else the environment's, else the default; a field resolved as FALLBACK takes the
// environment's value if the variable is set, else the struct's if given, else the default.
// `mode` chooses the rule for every field; `override_fields` makes single fields OVERRIDE in
// FALLBACK mode. Nothing is changed when hs_prof_start_ex returns false.
#define HS_PROF_CONFIG_VERSION 1
typedef enum hs_prof_mode_e {
  HS_PROF_FALLBACK = 0,  // environment wins, the struct fills the gaps
  HS_PROF_OVERRIDE = 1,  // the struct wins
} hs_prof_mode_t;

enum {
  HS_PROF_FIELD_SAMPLE_INTERVAL = 1u << 0,
  HS_PROF_FIELD_MAX_BYTES = 1u << 1,
  HS_PROF_FIELD_SEED = 1u << 2,
  HS_PROF_FIELD_ACCUM = 1u << 3,
  HS_PROF_FIELD_STACK_DEPTH = 1u << 4,
  HS_PROF_FIELD_DUMP_AT_EXIT = 1u << 5,
  HS_PROF_FIELD_DUMP_FORMAT = 1u << 6,
};

typedef struct hs_prof_config_s {
  size_t size;               // sizeof(hs_prof_config_t) of the caller's header
  uint32_t version;          // HS_PROF_CONFIG_VERSION of the caller's header
  uint32_t mode;             // hs_prof_mode_t
  uint32_t fields;           // HS_PROF_FIELD_* bits: which fields below are given
  uint32_t override_fields;  // HS_PROF_FIELD_* bits resolved as OVERRIDE in FALLBACK mode
  uint64_t sample_interval;  // mean bytes between samples (>= 1)
  uint64_t max_bytes;        // profiler memory budget (0 = unlimited)
  uint64_t seed;             // 0 = truly random
  uint32_t accum;            // nonzero: keep cumulative counts (alloc_* in profiles)
  uint32_t max_stack_depth;  // 1..128
  const char* dump_at_exit;  // path (copied) or NULL for none
  uint32_t dump_format;      // hs_prof_format_t of the exit dump
  uint32_t reserved0;
} hs_prof_config_t;

#define HS_PROF_CONFIG_INIT \
  { sizeof(hs_prof_config_t), HS_PROF_CONFIG_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 }

// ---- statistics --------------------------------------------------------------------------------
// Size/version tagged like hs_stats_t: set .size and .version; fields past the caller's
// version are never written. Raw sample counts plus the unsampled estimates.
#define HS_PROF_STATS_VERSION 1
typedef struct hs_prof_stats_s {
  size_t size;
  uint32_t version;
  uint8_t enabled;           // sampling now
  uint8_t accum;             // this session keeps cumulative counts
  uint16_t max_stack_depth;  // this session's stack depth
  uint64_t sample_interval;  // this (or the last) session's mean interval
  uint64_t seed;             // the session seed in effect (the drawn one for seed 0)
  uint64_t live_samples;     // sampled blocks still allocated
  uint64_t live_bytes;       // their requested bytes (raw, not unsampled)
  uint64_t accum_samples;    // samples taken this session (accum mode only, else 0)
  uint64_t accum_bytes;
  double live_objects_estimate;  // unsampled estimate of live objects
  double live_bytes_estimate;    // unsampled estimate of live bytes
  uint64_t unique_stacks;        // stacks interned now
  uint64_t profiler_bytes;       // profiler memory in use (raw OS pages)
  uint64_t max_bytes;            // the budget (0 = unlimited)
  uint64_t dropped_samples;      // samples not recorded, every cause
  uint64_t dropped_no_memory;    //   ... because the budget or the OS refused memory
  uint64_t dropped_empty_stack;  //   ... because no frame could be captured
  uint64_t total_samples;        // samples recorded since the session started
} hs_prof_stats_t;

// A zeroed struct with size and version filled in (usable from C and C++ without warnings).
static inline hs_prof_stats_t hs_prof_stats_init(void) {
  hs_prof_stats_t stats;
  memset(&stats, 0, sizeof stats);
  stats.size = sizeof(hs_prof_stats_t);
  stats.version = HS_PROF_STATS_VERSION;
  return stats;
}
#define HS_PROF_STATS_INIT hs_prof_stats_init()

// ---- the built-in profiler ---------------------------------------------------------------------
// Starts sampling; false if already running (the session is left untouched) or inside a
// visitor. interval 0 = HEAPSCOPE_PROF_SAMPLE_INTERVAL or the default. The seed comes from
// HEAPSCOPE_PROF_SEED (0, truly random, if unset).
HS_NODISCARD HS_API bool hs_prof_start(size_t interval);
// Same with an explicit seed: the same seed gives the same samples in another process for a
// deterministic program; 0 draws a random session seed.
HS_NODISCARD HS_API bool hs_prof_start_seeded(size_t interval, uint64_t seed);
// Starts with a configuration (NULL = hs_prof_start(0)); false for an unknown size/version.
HS_NODISCARD HS_API bool hs_prof_start_ex(const hs_prof_config_t* config);
// Stops sampling and drops every sample (profiler memory goes back to the OS).
HS_API void hs_prof_stop(void);
HS_NODISCARD HS_API bool hs_prof_is_enabled(void);
// Zeroes the cumulative counts (accum mode); live samples are kept.
HS_API void hs_prof_reset(void);

typedef bool (*hs_prof_write_fn)(void* arg, const void* data, size_t len);
// Writes the current profile to `path` (created/truncated) or through `write` (called with
// no profiler lock held; may allocate). False on failure (nothing is written through `write`
// if the profile could not be built). hs_prof_dump uses the text format. In every path of
// this header, %p becomes the process id, %e the program's file name and %% a %.
HS_NODISCARD HS_API bool hs_prof_dump(const char* path);
HS_NODISCARD HS_API bool hs_prof_dump_writer(hs_prof_write_fn write, void* arg);
HS_NODISCARD HS_API bool hs_prof_dump_proto(const char* path);
HS_NODISCARD HS_API bool hs_prof_dump_proto_writer(hs_prof_write_fn write, void* arg);
// Any format (hs_prof_format_t).
HS_NODISCARD HS_API bool hs_prof_dump_format(const char* path, int format);
HS_NODISCARD HS_API bool hs_prof_dump_format_writer(int format, hs_prof_write_fn write, void* arg);
// The peak profile: the sampled live set as it was when the estimated live bytes last reached
// a new high-water mark (copied again whenever they grow 10% past the last copy, so it is
// within 10% of the true peak). Kept across hs_prof_stop, replaced by the next session. False
// when there is none (nothing sampled yet) or it could not be written.
HS_NODISCARD HS_API bool hs_prof_dump_peak(const char* path, int format);

HS_NODISCARD HS_API bool hs_prof_stats_get(hs_prof_stats_t* stats);

// One interned stack and its counts. `stack` holds return addresses, innermost first, with
// the allocator's own frames removed.
typedef struct hs_prof_sample_info_s {
  const void* const* stack;
  size_t depth;
  uint64_t live_objects;  // raw sampled counts
  uint64_t live_bytes;
  uint64_t accum_objects;
  uint64_t accum_bytes;
  double live_objects_estimate;  // unsampled estimates
  double live_bytes_estimate;
  double accum_objects_estimate;
  double accum_bytes_estimate;
} hs_prof_sample_info_t;
// Return false to stop the visit early.
typedef bool (*hs_prof_visit_fn)(const hs_prof_sample_info_t* info, void* arg);
// Calls `visit` for every stack with nonzero counts, under the profiler lock. The callback may
// allocate and free (even sampled blocks); its own allocations are never sampled.
HS_NODISCARD HS_API bool hs_prof_visit(hs_prof_visit_fn visit, void* arg);

// A copy of the profile taken at one moment (raw OS memory), valid after hs_prof_stop.
typedef struct hs_prof_snapshot_s hs_prof_snapshot_t;
HS_NODISCARD HS_API hs_prof_snapshot_t* hs_prof_snapshot_new(void);
HS_NODISCARD HS_API bool hs_prof_snapshot_visit(const hs_prof_snapshot_t* snapshot,
                                                hs_prof_visit_fn visit, void* arg);
HS_API void hs_prof_snapshot_free(hs_prof_snapshot_t* snapshot);

// The executable segments of the loaded modules (main executable first), as written into
// profiles. `path` is valid during the callback only.
typedef struct hs_prof_module_info_s {
  const char* path;
  uintptr_t start;       // runtime address of the segment
  size_t size;           // bytes (p_memsz)
  uint64_t file_offset;  // p_offset
  const char* build_id;  // lowercase hex of NT_GNU_BUILD_ID, "" if none
  int is_main;           // the main executable
} hs_prof_module_info_t;
typedef bool (*hs_prof_module_visit_fn)(const hs_prof_module_info_t* info, void* arg);
HS_NODISCARD HS_API bool hs_prof_modules_visit(hs_prof_module_visit_fn visit, void* arg);

// ---- pluggable profilers (a user profiler attached per heap or process-wide) --------------------
// A user profiler receives the samples of the heaps it is attached to (instead of the built-in
// profiler). All fields are read-only to heapscope and may be read concurrently.
typedef struct hs_profiler_s hs_profiler_t;

#define HS_PROFILER_SAMPLE_DATA_MAX 1024
// Per-sample user data, stored with the sampled allocation (when sample_data_size > 0).
typedef struct hs_profiler_sample_data_s {
  size_t user_data_size;  // == the profiler's sample_data_size
  void* user_data[1];     // user_data_size bytes
} hs_profiler_sample_data_t;

// A sampled allocation. Return the next mean sample interval in bytes (0 keeps the current
// one). The sample is tracked (on_free/on_realloc_inplace called for it) when on_free is set.
typedef size_t (*hs_profiler_on_alloc_fn)(hs_profiler_t* profiler, hs_profiler_sample_data_t* data,
                                          void* ptr, size_t requested_size, size_t sample_interval,
                                          uint64_t bytes_since_last_sample, hs_heap_t* heap);
// A tracked sample changed size in place (realloc, hs_expand). Return value as on_alloc.
typedef size_t (*hs_profiler_on_realloc_inplace_fn)(hs_profiler_t* profiler,
                                                    hs_profiler_sample_data_t* data, void* ptr,
                                                    size_t old_size, size_t new_size,
                                                    hs_heap_t* heap);
// A tracked sample was freed (also by hs_heap_destroy, or by detaching the profiler).
typedef void (*hs_profiler_on_free_fn)(hs_profiler_t* profiler, hs_profiler_sample_data_t* data,
                                       void* ptr, hs_heap_t* heap);
// hs_profiler_snapshot was called (one thread at a time).
typedef void (*hs_profiler_on_snapshot_fn)(hs_profiler_t* profiler);

struct hs_profiler_s {
  void* reserved;                  // heapscope's; leave NULL
  size_t sample_data_size;         // bytes of user data per sample (0..1024)
  size_t initial_sample_interval;  // mean bytes between samples (0 = the default)
  hs_profiler_on_alloc_fn on_alloc;
  hs_profiler_on_free_fn on_free;  // NULL: samples are not tracked after on_alloc
  hs_profiler_on_realloc_inplace_fn on_realloc_inplace;
  hs_profiler_on_snapshot_fn on_snapshot;
};

// Attaches `profiler` to one heap (NULL detaches) / to every heap without its own (NULL
// detaches). The profiler samples once started.
HS_NODISCARD HS_API bool hs_heap_profile(hs_heap_t* heap, hs_profiler_t* profiler);
// Never sample this heap (e.g. a heap a profiler uses for its own data).
HS_API void hs_heap_profile_disable(hs_heap_t* heap);
HS_NODISCARD HS_API bool hs_profile(hs_profiler_t* profiler);
HS_NODISCARD HS_API bool hs_profiler_start(hs_profiler_t* profiler);
HS_NODISCARD HS_API bool hs_profiler_stop(hs_profiler_t* profiler);
HS_API void hs_profiler_snapshot(hs_profiler_t* profiler);

// The built-in pprof profiler as a pluggable one: writes `<base>.<seq>.heap` (text, when
// base_file_name ends in .heap or .text, the extension removed) or `<base>.<seq>.pb.gz`
// snapshots: on hs_profiler_snapshot, and automatically every `alloc_interval` allocated
// bytes, every `inuse_interval` bytes of in-use growth, every `time_interval_secs` seconds
// (each 0 = off; checked when samples are taken).
HS_NODISCARD HS_API hs_profiler_t* hs_pprof_profiler_new(size_t sample_interval,
                                                         const char* base_file_name,
                                                         size_t alloc_interval,
                                                         size_t inuse_interval,
                                                         size_t time_interval_secs);
HS_API void hs_pprof_profiler_delete(hs_profiler_t* profiler);

#ifdef __cplusplus
}
#endif
