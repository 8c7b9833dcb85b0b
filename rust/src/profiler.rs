//! The sampled heap profiler: allocations are sampled as a Poisson process over allocated
//! bytes (mean distance: the sample interval); each live sample keeps its allocation stack, and
//! the live samples are written in the formats `go tool pprof` reads.
//!
//! One profiler per process: every function acts on the same session, from any thread. The
//! environment variables `HEAPSCOPE_PROF_*` (see the engine's `profile.h`) also configure it.

use std::ffi::CString;
use std::io::Write;
use std::os::raw::{c_int, c_void};
use std::path::Path;

use crate::{ffi, Error};

/// Profile formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gperftools heap_v2 text: raw sampled counts and the mapped libraries.
    Text,
    /// gzip-compressed profile.proto with unsampled values and mappings; pprof symbolizes
    /// addresses from the binaries.
    Proto,
    /// As `Proto`, with function names written into the profile (readable anywhere).
    ProtoSymbolized,
}

impl Format {
    fn raw(self) -> c_int {
        match self {
            Format::Text => 0,
            Format::Proto => 1,
            Format::ProtoSymbolized => 2,
        }
    }
}

/// Who wins when a field is given both here and in the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precedence {
    /// The environment's `HEAPSCOPE_PROF_*` value wins; this configuration fills the gaps.
    Environment,
    /// This configuration wins over the environment.
    Config,
}

/// A session's configuration; `None` leaves a field to the environment or the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Mean bytes between samples (default 512 KiB).
    pub sample_interval: Option<u64>,
    /// Profiler memory budget in bytes (0 = unlimited).
    pub max_bytes: Option<u64>,
    /// Sampling seed (0 = truly random): a fixed seed samples a deterministic program the
    /// same way in every run.
    pub seed: Option<u64>,
    /// Also keep cumulative counts (`alloc_*` in profiles).
    pub accum: Option<bool>,
    /// Stack depth, 1..=128 (default 32).
    pub max_stack_depth: Option<u32>,
    /// Which side wins for fields set in both places.
    pub precedence: Precedence,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            sample_interval: None,
            max_bytes: None,
            seed: None,
            accum: None,
            max_stack_depth: None,
            precedence: Precedence::Config,
        }
    }
}

/// The profiler's counters. The layout is the engine's `hs_prof_stats_t`, filled in place.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProfStats {
    size: usize,
    version: u32,
    enabled: u8,
    accum: u8,
    /// This session's stack depth.
    pub max_stack_depth: u16,
    /// This (or the last) session's mean sample interval.
    pub sample_interval: u64,
    /// The seed in effect (the drawn one for seed 0).
    pub seed: u64,
    /// Sampled blocks still allocated.
    pub live_samples: u64,
    /// Their requested bytes (raw, not scaled up).
    pub live_bytes: u64,
    /// Samples taken this session (accum sessions only).
    pub accum_samples: u64,
    /// Their bytes.
    pub accum_bytes: u64,
    /// Unsampled estimate of live objects.
    pub live_objects_estimate: f64,
    /// Unsampled estimate of live bytes.
    pub live_bytes_estimate: f64,
    /// Distinct stacks interned.
    pub unique_stacks: u64,
    /// Memory the profiler uses.
    pub profiler_bytes: u64,
    /// The memory budget (0 = unlimited).
    pub max_bytes: u64,
    /// Samples not recorded, for any reason.
    pub dropped_samples: u64,
    /// ... because the budget or the OS refused memory.
    pub dropped_no_memory: u64,
    /// ... because no frame could be captured.
    pub dropped_empty_stack: u64,
    /// Samples recorded since the session started.
    pub total_samples: u64,
}

impl ProfStats {
    /// Sampling now.
    pub fn enabled(&self) -> bool {
        self.enabled != 0
    }

    /// This session keeps cumulative counts.
    pub fn accum(&self) -> bool {
        self.accum != 0
    }
}

fn started(ok: bool) -> Result<(), Error> {
    if ok {
        Ok(())
    } else if is_enabled() {
        Err(Error::AlreadyRunning)
    } else {
        Err(Error::Failed {
            what: "hs_prof_start",
        })
    }
}

/// Starts sampling every `interval` bytes on average (0: `HEAPSCOPE_PROF_SAMPLE_INTERVAL` or
/// 512 KiB).
pub fn start(interval: usize) -> Result<(), Error> {
    started(unsafe { ffi::hs_prof_start(interval) })
}

/// As [`start`], with a sampling seed (0 draws a random one).
pub fn start_seeded(interval: usize, seed: u64) -> Result<(), Error> {
    started(unsafe { ffi::hs_prof_start_seeded(interval, seed) })
}

/// Starts with a configuration.
pub fn start_with(config: &Config) -> Result<(), Error> {
    let mut raw = ffi::hs_prof_config_t {
        size: std::mem::size_of::<ffi::hs_prof_config_t>(),
        version: ffi::HS_PROF_CONFIG_VERSION,
        mode: match config.precedence {
            Precedence::Environment => 0,
            Precedence::Config => 1,
        },
        fields: 0,
        override_fields: 0,
        sample_interval: 0,
        max_bytes: 0,
        seed: 0,
        accum: 0,
        max_stack_depth: 0,
        dump_at_exit: std::ptr::null(),
        dump_format: 0,
        reserved0: 0,
    };
    if let Some(v) = config.sample_interval {
        raw.sample_interval = v;
        raw.fields |= ffi::HS_PROF_FIELD_SAMPLE_INTERVAL;
    }
    if let Some(v) = config.max_bytes {
        raw.max_bytes = v;
        raw.fields |= ffi::HS_PROF_FIELD_MAX_BYTES;
    }
    if let Some(v) = config.seed {
        raw.seed = v;
        raw.fields |= ffi::HS_PROF_FIELD_SEED;
    }
    if let Some(v) = config.accum {
        raw.accum = v as u32;
        raw.fields |= ffi::HS_PROF_FIELD_ACCUM;
    }
    if let Some(v) = config.max_stack_depth {
        raw.max_stack_depth = v;
        raw.fields |= ffi::HS_PROF_FIELD_STACK_DEPTH;
    }
    started(unsafe { ffi::hs_prof_start_ex(&raw) })
}

/// Stops sampling and drops every sample.
pub fn stop() {
    unsafe { ffi::hs_prof_stop() }
}

/// True while sampling.
pub fn is_enabled() -> bool {
    unsafe { ffi::hs_prof_is_enabled() }
}

/// Zeroes the cumulative counts; live samples are kept.
pub fn reset() {
    unsafe { ffi::hs_prof_reset() }
}

/// Writes the current profile to `path` (created or truncated).
pub fn dump<P: AsRef<Path>>(path: P, format: Format) -> Result<(), Error> {
    use std::os::unix::ffi::OsStrExt;
    let c_path =
        CString::new(path.as_ref().as_os_str().as_bytes()).map_err(|_| Error::InvalidPath)?;
    if unsafe { ffi::hs_prof_dump_format(c_path.as_ptr(), format.raw()) } {
        Ok(())
    } else {
        Err(Error::Failed {
            what: "profile dump",
        })
    }
}

struct Sink<'a> {
    out: &'a mut dyn Write,
    failed: bool,
}

unsafe extern "C" fn write_to_sink(arg: *mut c_void, data: *const c_void, len: usize) -> bool {
    let sink = &mut *(arg as *mut Sink<'_>);
    let bytes = std::slice::from_raw_parts(data as *const u8, len);
    // A panic must not unwind into C.
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sink.out.write_all(bytes).is_ok()
    }))
    .unwrap_or(false);
    sink.failed |= !ok;
    ok
}

/// Writes the current profile to `out`. The engine calls back with no profiler lock held, so
/// `out` may allocate.
pub fn dump_to<W: Write>(out: &mut W, format: Format) -> Result<(), Error> {
    let mut sink = Sink { out, failed: false };
    let ok = unsafe {
        ffi::hs_prof_dump_format_writer(
            format.raw(),
            write_to_sink,
            &mut sink as *mut Sink<'_> as *mut c_void,
        )
    };
    if ok && !sink.failed {
        Ok(())
    } else {
        Err(Error::Failed {
            what: "profile dump",
        })
    }
}

/// The current profile as bytes.
pub fn dump_to_vec(format: Format) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    dump_to(&mut bytes, format)?;
    Ok(bytes)
}

/// The profiler's counters now.
pub fn stats() -> Result<ProfStats, Error> {
    let mut out = ProfStats {
        size: std::mem::size_of::<ProfStats>(),
        version: ffi::HS_PROF_STATS_VERSION,
        ..Default::default()
    };
    if !unsafe { ffi::hs_prof_stats_get(&mut out) } {
        return Err(Error::Failed {
            what: "hs_prof_stats_get",
        });
    }
    Ok(out)
}
