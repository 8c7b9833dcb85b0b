//! The C API of `engine/include/heapscope/heapscope.h`, `profile.h` and `memory_events.h`, as
//! far as the crate uses it. Struct layouts mirror the headers field for field (the statistics structs are the
//! public `Stats` and `ProfStats`, `#[repr(C)]`).
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

use crate::memory_events::{Change, Snapshot};
use crate::profiler::ProfStats;
use crate::stats::Stats;

pub const HS_STATS_VERSION: u32 = 4;
pub const HS_PROF_STATS_VERSION: u32 = 1;
pub const HS_PROF_CONFIG_VERSION: u32 = 1;

pub const HS_PROF_FIELD_SAMPLE_INTERVAL: u32 = 1 << 0;
pub const HS_PROF_FIELD_MAX_BYTES: u32 = 1 << 1;
pub const HS_PROF_FIELD_SEED: u32 = 1 << 2;
pub const HS_PROF_FIELD_ACCUM: u32 = 1 << 3;
pub const HS_PROF_FIELD_STACK_DEPTH: u32 = 1 << 4;

#[repr(C)]
pub struct hs_prof_config_t {
    pub size: usize,
    pub version: u32,
    pub mode: u32,
    pub fields: u32,
    pub override_fields: u32,
    pub sample_interval: u64,
    pub max_bytes: u64,
    pub seed: u64,
    pub accum: u32,
    pub max_stack_depth: u32,
    pub dump_at_exit: *const c_char,
    pub dump_format: u32,
    pub reserved0: u32,
}

pub type hs_memory_change_fn = unsafe extern "C" fn(change: *const Change, arg: *mut c_void);
pub type hs_memory_visit_fn =
    unsafe extern "C" fn(address: *mut c_void, usable_size: usize, arg: *mut c_void) -> bool;

pub type hs_prof_write_fn =
    unsafe extern "C" fn(arg: *mut c_void, data: *const c_void, len: usize) -> bool;

extern "C" {
    pub fn hs_malloc(size: usize) -> *mut c_void;
    pub fn hs_zalloc(size: usize) -> *mut c_void;
    pub fn hs_realloc(p: *mut c_void, new_size: usize) -> *mut c_void;
    pub fn hs_free_sized(p: *mut c_void, size: usize);
    pub fn hs_usable_size(p: *const c_void) -> usize;
    pub fn hs_malloc_aligned(size: usize, alignment: usize) -> *mut c_void;
    pub fn hs_zalloc_aligned(size: usize, alignment: usize) -> *mut c_void;
    pub fn hs_realloc_aligned(p: *mut c_void, new_size: usize, alignment: usize) -> *mut c_void;
    pub fn hs_is_in_heap_region(p: *const c_void) -> c_int;

    pub fn hs_stats_get(out: *mut Stats) -> c_int;
    pub fn hs_collect(force: c_int);
    pub fn hs_version() -> c_int;

    pub fn hs_prof_start(interval: usize) -> bool;
    pub fn hs_prof_start_seeded(interval: usize, seed: u64) -> bool;
    pub fn hs_prof_start_ex(config: *const hs_prof_config_t) -> bool;
    pub fn hs_prof_stop();
    pub fn hs_prof_is_enabled() -> bool;
    pub fn hs_prof_reset();
    pub fn hs_prof_dump_format(path: *const c_char, format: c_int) -> bool;
    pub fn hs_prof_dump_format_writer(
        format: c_int,
        write: hs_prof_write_fn,
        arg: *mut c_void,
    ) -> bool;
    pub fn hs_prof_stats_get(stats: *mut ProfStats) -> bool;

    pub fn hs_memory_events_available() -> bool;
    pub fn hs_memory_events_set_enabled(enabled: bool) -> bool;
    pub fn hs_memory_events_enabled() -> bool;
    pub fn hs_memory_events_snapshot(out: *mut Snapshot) -> bool;
    // kind is the C enum hs_memory_change_kind_t (an int); an unknown kind is refused.
    pub fn hs_memory_events_set_callback(
        kind: u32,
        callback: Option<hs_memory_change_fn>,
        arg: *mut c_void,
    ) -> bool;
    pub fn hs_memory_events_visit(visitor: Option<hs_memory_visit_fn>, arg: *mut c_void) -> bool;
    pub fn hs_unwrapped_malloc(size: usize, alignment: usize) -> *mut c_void;
    pub fn hs_unwrapped_free(p: *mut c_void);
    pub fn hs_unwrapped_realloc(p: *mut c_void, size: usize, alignment: usize) -> *mut c_void;
}
