//! heapscope for Rust: the heapscope allocator as the program's global allocator, and its
//! sampled heap profiler, whose profiles `go tool pprof` reads.
//!
//! ```no_run
//! use heapscope::HeapScope;
//!
//! #[global_allocator]
//! static GLOBAL: HeapScope = HeapScope;
//!
//! fn main() -> Result<(), heapscope::Error> {
//!     heapscope::profiler::start(64 * 1024)?;
//!     let v: Vec<u64> = (0..1_000_000).collect();
//!     heapscope::profiler::dump("heap.pb.gz", heapscope::profiler::Format::ProtoSymbolized)?;
//!     heapscope::profiler::stop();
//!     drop(v);
//!     Ok(())
//! }
//! ```
//!
//! The engine is compiled from the repository's C++ sources by the build script, with its
//! profiler on and without replacing the C library's `malloc`: C code linked into the program
//! keeps its allocator, Rust allocations go through [`HeapScope`]. Stacks in profiles are
//! captured by walking frame pointers, so build with `-C force-frame-pointers=yes` (this
//! crate's `.cargo/config.toml` does) or the stacks stop at the first frame without one.

mod error;
mod ffi;
pub mod memory_events;
pub mod profiler;
mod stats;

use std::alloc::{GlobalAlloc, Layout};
use std::os::raw::c_void;

pub use error::Error;
pub use stats::{collect, stats, Stats};

/// The heapscope allocator. Install it with `#[global_allocator]`.
pub struct HeapScope;

/// The alignment of every block the plain entry points return: every size class is a
/// multiple of 16 bytes on 16-byte aligned pages.
const MIN_ALIGN: usize = 16;

// Layouts the plain entry points already align take the fast path.
#[inline]
fn plain(layout: &Layout) -> bool {
    layout.align() <= MIN_ALIGN
}

unsafe impl GlobalAlloc for HeapScope {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(&layout) {
            ffi::hs_malloc(layout.size()) as *mut u8
        } else {
            ffi::hs_malloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(&layout) {
            ffi::hs_zalloc(layout.size()) as *mut u8
        } else {
            ffi::hs_zalloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        ffi::hs_free_sized(ptr as *mut c_void, layout.size());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        if plain(&new_layout) {
            ffi::hs_realloc(ptr as *mut c_void, new_size) as *mut u8
        } else {
            ffi::hs_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
        }
    }
}

impl HeapScope {
    /// The usable size of a block from this allocator (at least the size it was allocated
    /// with); 0 for null.
    ///
    /// # Safety
    /// `ptr` must be null or a live block allocated by heapscope.
    pub unsafe fn usable_size(ptr: *const u8) -> usize {
        ffi::hs_usable_size(ptr as *const c_void)
    }

    /// True if `ptr` points into memory heapscope manages. Safe for any pointer value: a block
    /// of another allocator, a stack address or a dangling pointer read false (or true for a
    /// freed heapscope block; liveness is not checked).
    pub fn owns(ptr: *const u8) -> bool {
        unsafe { ffi::hs_is_in_heap_region(ptr as *const c_void) != 0 }
    }
}

/// The engine's version, e.g. 100 for 0.1.0.
pub fn version() -> i32 {
    unsafe { ffi::hs_version() }
}

#[cfg(test)]
mod memory_events_tests;
#[cfg(test)]
mod tests;
