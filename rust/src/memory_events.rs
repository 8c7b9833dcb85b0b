//! Memory events: exact accounting of the blocks allocated while tracking is on, and a
//! callback per kind of change (allocate, free, resize).
//!
//! The hook sites exist only when the crate is built with the `memory-events` feature (the
//! engine is then compiled with them, as `libheapscope_events.so` is for C programs). Without
//! it every function here still links and reports the subsystem off: [`available`] is false,
//! [`set_enabled`] returns false and changes nothing, [`snapshot`], [`set_callback`] and
//! [`visit`] return an error. The [`unwrapped`] functions work in every build.
//!
//! With the feature, tracking stays off until [`set_enabled`]`(true)` or
//! `HEAPSCOPE_MEMORY_EVENTS=1` at process start. Enabling starts a new tracking period: live
//! figures restart at zero (accumulated totals and the peak carry over); a block allocated
//! while tracking was off is unknown, and freeing it produces nothing.
//!
//! Counters are updated before the callback runs; a moving `realloc` is exactly one
//! [`ChangeKind::Resize`]; failed allocations and detected double frees produce nothing.
//! Allocations a callback makes on its own thread are neither counted nor dispatched, so a
//! callback may allocate (format a string, push to a `Vec`) without recursing.

use std::os::raw::c_void;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use crate::{ffi, Error};

/// Number of request-size histogram buckets: bucket 0 holds size 0, bucket `i` (1..46) sizes
/// in `[2^(i-1), 2^i)`, the last one everything from `2^46` up.
pub const HISTOGRAM_BUCKETS: usize = 48;

/// What kind of change a callback is told about.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// A block was allocated (`delta_bytes` = its usable size).
    Allocate = 0,
    /// A tracked block was freed (`delta_bytes` = minus its usable size).
    Free = 1,
    /// A tracked block was resized, in place or moved (`delta_bytes` = usable after minus
    /// usable before; 0 when the block kept its size).
    Resize = 2,
}

const KINDS: usize = 3;

/// One change, as the engine reports it to a callback. The layout is the engine's
/// `hs_memory_change_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// The kind of change.
    pub kind: ChangeKind,
    /// The block after the operation (for `Free`: the block that was freed).
    pub address: *mut u8,
    /// Live tracked bytes right after this operation.
    pub total_bytes: u64,
    /// Change of live bytes by this operation.
    pub delta_bytes: i64,
    /// Bytes asked for (`Allocate`, `Resize`); 0 for `Free`.
    pub request_size: u64,
}

/// Running totals, one consistent cut. The layout is the engine's `hs_memory_snapshot_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    size: usize,
    version: i32,
    /// Whether tracking is on.
    pub enabled: bool,
    /// Usable bytes of tracked live blocks.
    pub live_bytes: u64,
    /// Tracked live blocks.
    pub live_count: u64,
    /// Bytes allocated while tracking (plus growth by resize), cumulative.
    pub accum_bytes: u64,
    /// Allocations while tracking, cumulative.
    pub accum_count: u64,
    /// The highest `live_bytes` reached.
    pub peak_live_bytes: u64,
    /// When the peak was reached, in milliseconds since tracking was first enabled.
    pub peak_time_ms: u64,
    /// Blocks freed before any other allocation happened in the process.
    pub short_lived_count: u64,
    /// Allocations by request size (see [`HISTOGRAM_BUCKETS`]).
    pub size_histogram: [u64; HISTOGRAM_BUCKETS],
}

const SNAPSHOT_VERSION: i32 = 1;

/// Whether the engine was compiled with memory events (the `memory-events` feature).
pub fn available() -> bool {
    unsafe { ffi::hs_memory_events_available() }
}

/// Turns tracking on or off; returns the previous state (always false when not available).
pub fn set_enabled(enabled: bool) -> bool {
    unsafe { ffi::hs_memory_events_set_enabled(enabled) }
}

/// Whether tracking is on.
pub fn enabled() -> bool {
    unsafe { ffi::hs_memory_events_enabled() }
}

/// The running totals now.
pub fn snapshot() -> Result<Snapshot, Error> {
    let mut out = Snapshot {
        size: std::mem::size_of::<Snapshot>(),
        version: SNAPSHOT_VERSION,
        enabled: false,
        live_bytes: 0,
        live_count: 0,
        accum_bytes: 0,
        accum_count: 0,
        peak_live_bytes: 0,
        peak_time_ms: 0,
        short_lived_count: 0,
        size_histogram: [0; HISTOGRAM_BUCKETS],
    };
    if unsafe { ffi::hs_memory_events_snapshot(&mut out) } {
        Ok(out)
    } else {
        Err(Error::Failed {
            what: "hs_memory_events_snapshot",
        })
    }
}

type Callback = Box<dyn Fn(&Change) + Send + Sync + 'static>;

// The installed closure of each kind (a leaked `Box<Callback>`, null when none), and a lock
// that serializes installation so a replaced closure is dropped exactly once.
static INSTALLED: [AtomicPtr<Callback>; KINDS] = [
    AtomicPtr::new(ptr::null_mut()),
    AtomicPtr::new(ptr::null_mut()),
    AtomicPtr::new(ptr::null_mut()),
];
static INSTALL_LOCK: Mutex<()> = Mutex::new(());

unsafe extern "C" fn trampoline(change: *const Change, arg: *mut c_void) {
    let callback = &*(arg as *const Callback);
    // Unwinding into the allocator's C++ frames is undefined: a panicking callback aborts.
    if panic::catch_unwind(AssertUnwindSafe(|| callback(&*change))).is_err() {
        std::process::abort();
    }
}

fn install(kind: ChangeKind, callback: Option<Callback>) -> Result<(), Error> {
    let _serialized = INSTALL_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let new = callback.map_or(ptr::null_mut(), |c| Box::into_raw(Box::new(c)));
    let fn_ptr: Option<ffi::hs_memory_change_fn> = if new.is_null() {
        None
    } else {
        Some(trampoline)
    };
    if !unsafe { ffi::hs_memory_events_set_callback(kind as u32, fn_ptr, new as *mut c_void) } {
        if !new.is_null() {
            drop(unsafe { Box::from_raw(new) });
        }
        return Err(Error::Failed {
            what: "hs_memory_events_set_callback",
        });
    }
    // The engine returns only once no thread still runs the previous callback of this kind.
    let old = INSTALLED[kind as usize].swap(new, Ordering::AcqRel);
    if !old.is_null() {
        drop(unsafe { Box::from_raw(old) });
    }
    Ok(())
}

/// Installs `callback` for changes of `kind`, replacing (and dropping) the previous one. It
/// runs on the thread that made the change, after the counters include it. A panic in it
/// aborts the process.
pub fn set_callback<F>(kind: ChangeKind, callback: F) -> Result<(), Error>
where
    F: Fn(&Change) + Send + Sync + 'static,
{
    install(kind, Some(Box::new(callback)))
}

/// Removes the callback of `kind` (dropping it once no thread runs it).
pub fn clear_callback(kind: ChangeKind) -> Result<(), Error> {
    install(kind, None)
}

/// Calls `visitor(address, usable_size)` for every tracked live block of every thread until it
/// returns false. Blocks allocated or freed concurrently may or may not be seen. The visitor
/// may allocate but must not free a tracked block.
pub fn visit<F>(mut visitor: F) -> Result<(), Error>
where
    F: FnMut(*mut u8, usize) -> bool,
{
    unsafe extern "C" fn each<F: FnMut(*mut u8, usize) -> bool>(
        address: *mut c_void,
        usable_size: usize,
        arg: *mut c_void,
    ) -> bool {
        let visitor = &mut *(arg as *mut F);
        match panic::catch_unwind(AssertUnwindSafe(|| {
            visitor(address as *mut u8, usable_size)
        })) {
            Ok(more) => more,
            Err(_) => std::process::abort(),
        }
    }
    let arg = &mut visitor as *mut F as *mut c_void;
    if unsafe { ffi::hs_memory_events_visit(Some(each::<F>), arg) } {
        Ok(())
    } else {
        Err(Error::Failed {
            what: "hs_memory_events_visit",
        })
    }
}

/// Memory straight from the OS, never counted and never mixable with the global allocator:
/// for tools (e.g. a callback's own bookkeeping) that must not recurse into the allocator.
pub mod unwrapped {
    use std::os::raw::c_void;

    use crate::ffi;

    /// `size` bytes aligned to `alignment` (0: pointer size); null on failure or when
    /// `alignment` is not a power of two.
    pub fn alloc(size: usize, alignment: usize) -> *mut u8 {
        unsafe { ffi::hs_unwrapped_malloc(size, alignment) as *mut u8 }
    }

    /// Frees a block from [`alloc`] or [`realloc`].
    ///
    /// # Safety
    /// `ptr` must be null or a live block from this module.
    pub unsafe fn free(ptr: *mut u8) {
        ffi::hs_unwrapped_free(ptr as *mut c_void)
    }

    /// Resizes a block from this module (null `ptr` allocates; `size` 0 frees and returns
    /// null), keeping its content up to the smaller size.
    ///
    /// # Safety
    /// `ptr` must be null or a live block from this module.
    pub unsafe fn realloc(ptr: *mut u8, size: usize, alignment: usize) -> *mut u8 {
        ffi::hs_unwrapped_realloc(ptr as *mut c_void, size, alignment) as *mut u8
    }
}
