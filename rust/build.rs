//! Compiles the heapscope engine from this repository's C++ sources into a static library.
//!
//! Every `.cc` under `engine/src` is compiled (the tree is walked, so sources may move between
//! its subfolders) except the `override_*` shims (a Rust program gets the engine through
//! `#[global_allocator]` and keeps the C library's malloc for C code) and the platform files of
//! other operating systems (`*_linux.cc`, `*_windows.cc`: only the target's are compiled).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

// True when a per-OS source file (named `*_<os>.cc`) belongs to another operating system.
fn for_other_os(name: &str, target_os: &str) -> bool {
    ["linux", "windows"]
        .iter()
        .any(|os| *os != target_os && name.ends_with(&format!("_{}.cc", os)))
}

fn collect_sources(dir: &Path, target_os: &str, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {}", dir.display(), e));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect_sources(&path, target_os, out);
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".cc")
            && !name.ends_with("_test.cc")
            && !name.starts_with("override_")
            && !for_other_os(name, target_os)
        {
            out.push(path);
        }
    }
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    // The repository root holds engine/ (and the shared headers the engine includes from the
    // root, or from base/ where that folder exists).
    let root = match env::var_os("HEAPSCOPE_SOURCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => manifest_dir
            .parent()
            .expect("rust/ sits in the repository")
            .to_path_buf(),
    };
    let engine = root.join("engine");
    let src = engine.join("src");
    let include = engine.join("include");

    let mut sources = Vec::new();
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    collect_sources(&src, &target_os, &mut sources);
    sources.sort();
    assert!(
        !sources.is_empty(),
        "no engine sources under {}",
        src.display()
    );

    // One translation unit that includes every source: cc compiles its files one after another
    // (its parallel mode needs the jobserver crate, which Debian does not package), and the
    // engine's 47 files then took most of a `cargo build`; as one unit they compile in about a
    // fifth of the time. So the engine's file-local names must stay distinct across files (a
    // clash fails this build, which CI runs as rust.cargo_test); the quoted includes still
    // resolve next to each real file.
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let unity = out_dir.join("heapscope_engine_unity.cc");
    let text: String = sources
        .iter()
        .map(|source| format!("#include \"{}\"\n", source.display()))
        .collect();
    if fs::read_to_string(&unity).ok().as_deref() != Some(text.as_str()) {
        fs::write(&unity, text).expect("writing the engine's unity unit");
    }

    // The `memory-events` feature compiles the hook sites in (cargo sets this variable).
    let memory_events = env::var_os("CARGO_FEATURE_MEMORY_EVENTS").is_some();

    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file(&unity)
        .include(&include)
        .include(&src)
        .include(&root)
        // The engine is always optimized: a debug `cargo test` should not measure an -O0 allocator.
        .opt_level(2)
        .flag("-std=c++20")
        // As the CMake build: frame pointers for the profiler's stack walk, initial-exec TLS
        // (general-dynamic TLS may call malloc), no exceptions or RTTI inside the allocator, only
        // hs_* exported.
        .flag("-fno-omit-frame-pointer")
        .flag("-ftls-model=initial-exec")
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .flag("-fvisibility=hidden")
        .flag("-fno-plt")
        .flag("-fno-stack-protector")
        .define("NDEBUG", None)
        .define("HS_PROFILER", "1")
        .define("HS_MEMORY_EVENTS", if memory_events { "1" } else { "0" })
        .warnings(false);
    let base = root.join("base");
    if base.is_dir() {
        build.include(&base);
    }
    // The engine needs only libc (engine/README.md, "Dependencies"): no C++ runtime, libm or
    // zlib. Its demangler is a weak reference, so a Rust program's profiles keep mangled C++
    // names unless something else loads libstdc++.
    build.cpp_link_stdlib(None);
    build.compile("heapscope_engine");

    println!("cargo:rustc-link-lib=pthread");
    println!("cargo:rerun-if-env-changed=HEAPSCOPE_SOURCE_DIR");
    for dir in [&src, &include, &base, &root.join("stats")] {
        if dir.exists() {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
    }
}
