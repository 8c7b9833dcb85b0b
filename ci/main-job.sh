#!/usr/bin/env bash
# The README's main job: installs dependencies, builds the Release preset, lists the allocator
# registry (versions and digests) and runs the paired, interleaved allocator comparison
# across the engine, mimalloc, jemalloc, tcmalloc and glibc. When the campaign and site
# issues land this becomes `hsbench run quick` + `hsbench publish`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/install-deps.sh
cmake --preset release >/dev/null
# Only what the main job runs; the test command builds the rest.
cmake --build --preset release --target hsbench hs-workload heapscope heapscope_noprof hs-alloc-bench

out=build/release/main-job
mkdir -p "$out"
build/release/harness/hsbench allocators
build/release/harness/hsbench allocators --json > "$out/allocators.json"
python3 engine/bench/compare.py --build-dir build/release --rounds 5 --repetitions 3 \
  --min-time 0.1 --json-out "$out/alloc-compare.json" | tee "$out/alloc-compare.md"
echo "main job: results in $out/ (allocators.json, alloc-compare.json, alloc-compare.md)"
