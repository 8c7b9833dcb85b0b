//! Unit tests: the test binary itself allocates through heapscope.

use std::alloc::{GlobalAlloc, Layout};
use std::io::Read;
use std::sync::Mutex;

use crate::profiler::{self, Format};
use crate::{stats, HeapScope};

#[global_allocator]
static GLOBAL: HeapScope = HeapScope;

// The profiler is one per process and the tests run on several threads.
static PROFILER: Mutex<()> = Mutex::new(());

#[test]
fn global_allocations_are_served_by_heapscope() {
    let before = stats().unwrap().alloc_count;
    let boxed = Box::new([7u8; 100]);
    let mut v: Vec<u64> = Vec::with_capacity(1000);
    v.push(1);
    assert!(HeapScope::owns(boxed.as_ptr()));
    assert!(HeapScope::owns(v.as_ptr() as *const u8));
    // A stack address is not heapscope's: the check can fail.
    let local = 0u64;
    assert!(!HeapScope::owns(&local as *const u64 as *const u8));
    assert!(stats().unwrap().alloc_count >= before + 2);
    assert!(unsafe { HeapScope::usable_size(boxed.as_ptr()) } >= 100);
}

#[test]
fn alignment_is_honoured() {
    for &align in &[1usize, 8, 16, 32, 64, 4096, 65536, 1 << 21] {
        for &size in &[1usize, 24, 100, 5000, 300_000] {
            let layout = Layout::from_size_align(size, align).unwrap();
            unsafe {
                let p = GLOBAL.alloc(layout);
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0, "size {} align {}", size, align);
                p.write_bytes(0xAB, size);
                GLOBAL.dealloc(p, layout);
                let z = GLOBAL.alloc_zeroed(layout);
                assert_eq!(z as usize % align, 0);
                assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                GLOBAL.dealloc(z, layout);
            }
        }
    }
}

#[test]
fn realloc_keeps_content() {
    for &align in &[8usize, 64, 4096] {
        let mut size = 3usize;
        let layout = Layout::from_size_align(size, align).unwrap();
        unsafe {
            let mut p = GLOBAL.alloc(layout);
            for i in 0..size {
                *p.add(i) = i as u8;
            }
            while size < 4 << 20 {
                let new_size = size * 3;
                p = GLOBAL.realloc(p, Layout::from_size_align(size, align).unwrap(), new_size);
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0);
                for i in 0..size {
                    assert_eq!(
                        *p.add(i),
                        i as u8,
                        "byte {} after growing to {}",
                        i,
                        new_size
                    );
                }
                for i in size..new_size {
                    *p.add(i) = i as u8;
                }
                size = new_size;
            }
            let shrunk = GLOBAL.realloc(p, Layout::from_size_align(size, align).unwrap(), 10);
            for i in 0..10 {
                assert_eq!(*shrunk.add(i), i as u8);
            }
            GLOBAL.dealloc(shrunk, Layout::from_size_align(10, align).unwrap());
        }
    }
    let mut v: Vec<u32> = Vec::new();
    for i in 0..1_000_000u32 {
        v.push(i);
    }
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32));
}

#[inline(never)]
fn allocate_for_profile() -> Vec<Vec<u8>> {
    (0..64).map(|i| vec![i as u8; 16 * 1024]).collect()
}

#[test]
fn profiler_start_dump_stop() {
    let _guard = PROFILER.lock().unwrap();
    profiler::start_seeded(4096, 42).unwrap();
    assert_eq!(profiler::start(4096), Err(crate::Error::AlreadyRunning));
    let kept = allocate_for_profile();
    let st = profiler::stats().unwrap();
    assert!(st.enabled());
    assert_eq!(st.sample_interval, 4096);
    assert!(st.live_samples >= 32, "{:?}", st);
    assert!(st.live_bytes_estimate > 0.5 * 1024.0 * 1024.0, "{:?}", st);

    // Text: a heap_v2 header and stack lines with nonzero counts.
    let text = String::from_utf8(profiler::dump_to_vec(Format::Text).unwrap()).unwrap();
    assert!(
        text.starts_with("heap profile:"),
        "{}",
        &text[..text.len().min(200)]
    );
    let stacks = text.lines().filter(|l| l.contains(" @ 0x")).count();
    assert!(stacks >= 1, "{}", text);

    // Proto: gzip'd profile.proto with samples and a string table naming the sample types.
    for format in [Format::Proto, Format::ProtoSymbolized] {
        let gz = profiler::dump_to_vec(format).unwrap();
        let proto = gunzip(&gz);
        let fields = top_level_fields(&proto);
        let samples = fields.iter().filter(|(n, _)| *n == 2).count();
        assert!(samples >= 1, "{:?}: no samples", format);
        let strings: Vec<&[u8]> = fields
            .iter()
            .filter(|(n, _)| *n == 6)
            .map(|(_, b)| b.as_slice())
            .collect();
        assert!(strings.iter().any(|s| *s == b"inuse_space"), "{:?}", format);
        if format == Format::ProtoSymbolized {
            assert!(
                strings
                    .iter()
                    .any(|s| String::from_utf8_lossy(s).contains("allocate_for_profile")),
                "no Rust function name in the symbolized profile"
            );
        }
    }

    // To a file, then with the session stopped the dump fails.
    let path = std::env::temp_dir().join(format!("heapscope-test-{}.heap", std::process::id()));
    profiler::dump(&path, Format::Text).unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 0);
    std::fs::remove_file(&path).unwrap();
    profiler::stop();
    assert!(!profiler::is_enabled());
    drop(kept);
}

// --- a gzip reader (zlib, an independent decoder of the engine's gzip) and a protobuf field walker

#[repr(C)]
struct ZStream {
    next_in: *const u8,
    avail_in: u32,
    total_in: std::os::raw::c_ulong,
    next_out: *mut u8,
    avail_out: u32,
    total_out: std::os::raw::c_ulong,
    msg: *const std::os::raw::c_char,
    state: *mut std::os::raw::c_void,
    zalloc: *const std::os::raw::c_void,
    zfree: *const std::os::raw::c_void,
    opaque: *mut std::os::raw::c_void,
    data_type: i32,
    adler: std::os::raw::c_ulong,
    reserved: std::os::raw::c_ulong,
}

#[link(name = "z")]
extern "C" {
    fn zlibVersion() -> *const std::os::raw::c_char;
    fn inflateInit2_(
        strm: *mut ZStream,
        window_bits: i32,
        version: *const std::os::raw::c_char,
        stream_size: i32,
    ) -> i32;
    fn inflate(strm: *mut ZStream, flush: i32) -> i32;
    fn inflateEnd(strm: *mut ZStream) -> i32;
}

fn gunzip(data: &[u8]) -> Vec<u8> {
    assert!(
        data.len() > 18 && data[0] == 0x1f && data[1] == 0x8b,
        "not gzip"
    );
    let mut out = vec![0u8; 64 << 20];
    unsafe {
        let mut z: ZStream = std::mem::zeroed();
        z.next_in = data.as_ptr();
        z.avail_in = data.len() as u32;
        z.next_out = out.as_mut_ptr();
        z.avail_out = out.len() as u32;
        // 16 + 15: a gzip wrapper around the largest window.
        assert_eq!(
            inflateInit2_(
                &mut z,
                31,
                zlibVersion(),
                std::mem::size_of::<ZStream>() as i32
            ),
            0
        );
        let rc = inflate(&mut z, 4 /* Z_FINISH */);
        assert_eq!(rc, 1 /* Z_STREAM_END */, "inflate failed");
        let n = z.total_out as usize;
        inflateEnd(&mut z);
        out.truncate(n);
    }
    out
}

fn varint(data: &mut impl Read) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let mut b = [0u8];
        if data.read(&mut b).ok()? == 0 {
            return None;
        }
        value |= u64::from(b[0] & 0x7f) << shift;
        if b[0] & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

// (field number, payload) of every top-level field; payload empty for non-length fields.
fn top_level_fields(proto: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let mut cur = std::io::Cursor::new(proto);
    let mut fields = Vec::new();
    while let Some(key) = varint(&mut cur) {
        let (number, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                varint(&mut cur).expect("truncated varint");
                fields.push((number, Vec::new()));
            }
            2 => {
                let len = varint(&mut cur).expect("truncated length") as usize;
                let mut payload = vec![0u8; len];
                cur.read_exact(&mut payload).expect("truncated field");
                fields.push((number, payload));
            }
            _ => panic!("unexpected wire type {} at top level", wire),
        }
    }
    assert_eq!(cur.position() as usize, proto.len());
    fields
}
