// Source compatibility for programs written against the mi_prof_* API of mimalloc-pprof (a
// mimalloc fork with a sampled heap profiler). Include this instead of its profile header; the
// calls then go to heapscope.
//
// What differs, on purpose:
//   * the structs are heapscope's (hs_prof_config_t, hs_prof_stats_t): fields are named
//     sample_interval (not sample_rate), profiler_bytes (not arena_committed), and a config
//     field counts only when its HS_PROF_FIELD_* bit is set in `fields`;
//   * writer callbacks return bool (false stops the dump); the adapter below accepts the
//     mimalloc-pprof's void-returning writers;
//   * mi_prof_dump_proto writes gzip-compressed profile.proto (pprof reads both);
//   * sampling is Poisson (unbiased estimates), and seed 0 is truly random.
#pragma once

#include "heapscope/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef hs_prof_config_t mi_prof_config_t;
typedef hs_prof_stats_t mi_prof_stats_t;
typedef hs_prof_sample_info_t mi_prof_sample_info_t;
typedef hs_prof_snapshot_t mi_prof_snapshot_t;
typedef hs_prof_module_info_t mi_prof_module_info_t;
typedef hs_prof_visit_fn mi_prof_visit_fun;
typedef hs_prof_module_visit_fn mi_prof_module_visit_fun;
typedef void(mi_prof_write_fun)(void* arg, const char* buf, size_t len);

#define MI_PROF_CONFIG_VERSION HS_PROF_CONFIG_VERSION
#define MI_PROF_STAT_VERSION HS_PROF_STATS_VERSION
#define MI_PROF_CONFIG_FALLBACK HS_PROF_FALLBACK
#define MI_PROF_CONFIG_OVERRIDE HS_PROF_OVERRIDE
#define MI_PROF_FORMAT_TEXT HS_PROF_FORMAT_TEXT
#define MI_PROF_FORMAT_PROTO HS_PROF_FORMAT_PROTO
#define mi_prof_config_t_decl(name) hs_prof_config_t name = HS_PROF_CONFIG_INIT

#define mi_prof_start hs_prof_start
#define mi_prof_start_seeded hs_prof_start_seeded
#define mi_prof_start_ex hs_prof_start_ex
#define mi_prof_stop hs_prof_stop
#define mi_prof_is_enabled hs_prof_is_enabled
#define mi_prof_reset hs_prof_reset
#define mi_prof_dump hs_prof_dump
#define mi_prof_dump_proto hs_prof_dump_proto
#define mi_prof_stats_get hs_prof_stats_get
#define mi_prof_visit hs_prof_visit
#define mi_prof_snapshot_new hs_prof_snapshot_new
#define mi_prof_snapshot_visit hs_prof_snapshot_visit
#define mi_prof_snapshot_free hs_prof_snapshot_free
#define mi_prof_modules_visit hs_prof_modules_visit

// mimalloc-pprof's writers return nothing; heapscope's return whether to go on.
typedef struct mi_prof_writer_adapter_s {
  mi_prof_write_fun* write;
  void* arg;
} mi_prof_writer_adapter_t;

static inline bool mi_prof_adapt_write(void* arg, const void* data, size_t len) {
  const mi_prof_writer_adapter_t* adapter = (const mi_prof_writer_adapter_t*)arg;
  adapter->write(adapter->arg, (const char*)data, len);
  return true;
}

static inline bool mi_prof_dump_writer(mi_prof_write_fun* write, void* arg) {
  mi_prof_writer_adapter_t adapter = {write, arg};
  return write != NULL && hs_prof_dump_writer(mi_prof_adapt_write, &adapter);
}

static inline bool mi_prof_dump_proto_writer(mi_prof_write_fun* write, void* arg) {
  mi_prof_writer_adapter_t adapter = {write, arg};
  return write != NULL && hs_prof_dump_proto_writer(mi_prof_adapt_write, &adapter);
}

// Deprecated in mimalloc-pprof; kept for old callers.
static inline void mi_prof_debug_stats(size_t* records, size_t* bytes, size_t* unique_stacks) {
  hs_prof_stats_t stats = HS_PROF_STATS_INIT;
  bool ok = hs_prof_stats_get(&stats);
  if (records != NULL) *records = ok ? (size_t)stats.live_samples : 0;
  if (bytes != NULL) *bytes = ok ? (size_t)stats.profiler_bytes : 0;
  if (unique_stacks != NULL) *unique_stacks = ok ? (size_t)stats.unique_stacks : 0;
}

#ifdef __cplusplus
}
#endif
