use crate::{ffi, Error};

/// Process-wide allocator statistics (exact when no other thread allocates meanwhile). The
/// layout is the engine's `hs_stats_t`, filled in place.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    size: usize,
    version: u32,
    reserved0: u32,
    /// Successful allocations, cumulative.
    pub alloc_count: u64,
    /// Frees of non-null pointers, cumulative.
    pub free_count: u64,
    /// Bytes asked for, cumulative.
    pub requested_bytes: u64,
    /// Usable bytes of live blocks.
    pub allocated_bytes: u64,
    /// Bytes mapped and not purged (resident at most).
    pub committed_bytes: u64,
    /// High-water mark of `committed_bytes`.
    pub committed_peak: u64,
    /// Address space reserved from the OS.
    pub reserved_bytes: u64,
    /// Bytes returned to the OS, cumulative.
    pub purged_bytes: u64,
    /// Pages (size-class spans) in use.
    pub pages: u64,
    /// Segments mapped.
    pub segments: u64,
    /// Heaps alive.
    pub heaps: u64,
    /// Threads with a live heapscope heap.
    pub threads: u64,
    /// Live huge (dedicated mapping) allocations.
    pub huge_count: u64,
    /// Segments of exited threads not yet taken over.
    pub abandoned_segments: u64,
    /// Huge reallocations served by remapping instead of copying.
    pub huge_remaps: u64,
    /// Full pages other threads took over from a thread idle in the allocator, cumulative.
    pub pages_taken_over: u64,
    /// Emptied pages other threads gave back to the OS for a thread idle in the allocator,
    /// cumulative.
    pub pages_given_back: u64,
}

/// The allocator's statistics now.
pub fn stats() -> Result<Stats, Error> {
    let mut out = Stats {
        size: std::mem::size_of::<Stats>(),
        version: ffi::HS_STATS_VERSION,
        ..Default::default()
    };
    if unsafe { ffi::hs_stats_get(&mut out) } != 0 {
        return Err(Error::Failed {
            what: "hs_stats_get",
        });
    }
    Ok(out)
}

/// Returns free memory to the OS now; `force` also releases this thread's cached memory and
/// takes over every exited thread's segments.
pub fn collect(force: bool) {
    unsafe { ffi::hs_collect(force as i32) }
}
