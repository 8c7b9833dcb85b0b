//! Profiles itself: allocates through heapscope with the profiler running, then writes a
//! profile that `go tool pprof` opens with the Rust function names.
//!
//! ```sh
//! cargo run --example profile_self -- heap.pb.gz
//! go tool pprof -top -cum heap.pb.gz
//! ```

use heapscope::profiler::{self, Format};
use heapscope::HeapScope;

#[global_allocator]
static GLOBAL: HeapScope = HeapScope;

/// About 8 MiB in 1 KiB rows: many small sampled blocks.
#[inline(never)]
fn build_rows() -> Vec<Vec<u8>> {
    (0..8 * 1024).map(|i| vec![(i % 251) as u8; 1024]).collect()
}

/// Three 4 MiB buffers: a few large blocks.
#[inline(never)]
fn grow_buffers() -> Vec<Vec<u64>> {
    (0..3).map(|_| Vec::with_capacity(512 * 1024)).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "profile_self.pb.gz".to_string());
    // Fixed seed: the same samples in every run.
    profiler::start_seeded(64 * 1024, 1)?;
    let rows = build_rows();
    let buffers = grow_buffers();
    let stats = profiler::stats()?;
    profiler::dump(&path, Format::ProtoSymbolized)?;
    profiler::stop();
    println!(
        "{}: {} live samples, ~{:.1} MiB live (estimate); rows {}, buffers {}",
        path,
        stats.live_samples,
        stats.live_bytes_estimate / (1024.0 * 1024.0),
        rows.len(),
        buffers.len()
    );
    Ok(())
}
