#!/usr/bin/env bash
# The README's test command: installs dependencies, checks formatting, builds the Release,
# ASan/UBSan, TSan and Debug presets, runs clang-tidy on the changed files, and runs the default
# (non-slow) Release suite plus the tests labelled for each of the other presets (Debug: the
# engine's tests with its invariant checks compiled in, HS_DEBUG=2), the gates (ISA baseline,
# memory) and the fuzz gate, each with its positive control, and the engine's tests cross-built
# for arm64 and run under qemu (HEAPSCOPE_SKIP_ARM64=1 skips that stage) and for Windows with
# MinGW-w64 and run under Wine (HEAPSCOPE_SKIP_WINDOWS=1 skips that one).
# Usage: bash ci/test.sh [--release-only]
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/install-deps.sh
bash ci/check-format.sh

presets=(release asan tsan debug)
if [ "${1:-}" = "--release-only" ]; then presets=(release); fi

status=0
# What failed, printed again at the very end: a CI log is often read from its tail only.
failures=()
fail_stage() {  # <stage name> [<ctest build dir>]: records the stage and its failed tests
  status=1
  local tests=""
  if [ -n "${2:-}" ] && [ -f "$2/Testing/Temporary/LastTestsFailed.log" ]; then
    tests=" ($(cut -d: -f2- "$2/Testing/Temporary/LastTestsFailed.log" | paste -sd, -))"
  fi
  failures+=("$1$tests")
}
for preset in "${presets[@]}"; do
  echo "=== preset: $preset ==="
  cmake --preset "$preset" >/dev/null
  if [ "$preset" = release ]; then
    cmake --build --preset "$preset"
    # clang-tidy on the C/C++ changed against origin/main (or the last commit); uses this
    # build's compile_commands.json and generated sources.
    if ! bash ci/check-tidy.sh; then fail_stage "clang-tidy"; fi
  else
    # Only the executables of the tests this preset runs (see tests_<label> in CMakeLists.txt).
    cmake --build --preset "$preset" --target "tests_$preset"
  fi
  # The asan/tsan/debug test presets select the tests labelled for them; the release preset leaves
  # out the timing tests, which then run one at a time so our own tests do not load the clock.
  if ! ctest --preset "$preset"; then fail_stage "ctest $preset" "build/$preset"; fi
  if [ "$preset" = release ] && ! ctest --preset timing; then
    fail_stage "ctest timing" "build/release"
  fi
  # The gates, each with its positive control (ISA baseline of the shipped libraries, memory
  # against the committed baseline), one at a time: a step of their own that fails the run.
  if [ "$preset" = release ]; then
    echo "=== gates ==="
    if ! ctest --preset gates; then fail_stage "ctest gates" "build/release"; fi
  fi
done
# The engine cross-built for 64-bit Arm Linux, its tests run under qemu-aarch64
# (ci/cross-test.sh, engine/docs/platforms.md). HEAPSCOPE_SKIP_ARM64=1 skips it.
if [ "${1:-}" != "--release-only" ]; then
  if [ "${HEAPSCOPE_SKIP_ARM64:-0}" = 1 ]; then
    echo "=== arm64: skipped (HEAPSCOPE_SKIP_ARM64=1) ==="
  else
    echo "=== arm64 ==="
    if ! bash ci/cross-test.sh arm64; then fail_stage "arm64" "build/cross-arm64"; fi
  fi
fi
# The engine cross-built for Windows with MinGW-w64, its tests run under Wine in a prefix inside
# the build folder (ci/cross-test.sh, engine/docs/platforms.md). HEAPSCOPE_SKIP_WINDOWS=1 skips it.
if [ "${1:-}" != "--release-only" ]; then
  if [ "${HEAPSCOPE_SKIP_WINDOWS:-0}" = 1 ]; then
    echo "=== windows: skipped (HEAPSCOPE_SKIP_WINDOWS=1) ==="
  else
    echo "=== windows ==="
    if ! bash ci/cross-test.sh windows; then fail_stage "windows" "build/cross-windows"; fi
  fi
fi
# The fuzz gate (clang-14 libFuzzer, ASan+UBSan): its planted use-after-free must be caught,
# then every target runs briefly on its seed corpus. The 30-minute runs are a longer job:
# HEAPSCOPE_FUZZ_SECONDS=1800 bash ci/fuzz-gate.sh (fuzz/README.md).
if [ "${1:-}" != "--release-only" ]; then
  echo "=== fuzz gate ==="
  if ! bash ci/fuzz-gate.sh --seconds "${HEAPSCOPE_FUZZ_SECONDS:-10}"; then fail_stage "fuzz gate"; fi
fi
if [ $status -eq 0 ]; then
  echo "ci/test.sh: every stage passed"
else
  echo "ci/test.sh: FAILED: ${failures[*]}"
fi
exit $status
