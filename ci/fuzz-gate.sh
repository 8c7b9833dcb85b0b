#!/usr/bin/env bash
# The fuzz gate: builds the `fuzz` preset (clang-14, libFuzzer, ASan+UBSan) and runs every
# libFuzzer target for a bounded time on its seed corpus (fuzz/corpus/<target>/, copied into a
# scratch corpus so the repository's seeds stay as committed). Fails on any finding: a crash,
# a sanitizer report, a leak, a timeout, an out-of-memory or an uncaught exception.
# Before the real targets it runs its positive control: profiler_fuzz_planted_uaf, built with
# HEAPSCOPE_FUZZ_PLANT_UAF, must end with ASan's "heap-use-after-free" report header; a gate
# that cannot see that finding proves nothing, so the gate fails then too.
#
# Usage: bash ci/fuzz-gate.sh [--seconds N] [--target NAME]... [--control-only] [--no-build]
#   --seconds N     per target (default: $HEAPSCOPE_FUZZ_SECONDS, else 60)
#   --target NAME   run only these targets (default: all four)
#   --control-only  run only the positive control
#   --no-build      use the fuzz build as it is
# Environment: HEAPSCOPE_FUZZ_JOBS, how many targets (and build jobs) run at once (default 2).
# Logs and any crashing input: build/fuzz/fuzz-gate/<target>/ (crash-*, leak-*, timeout-*).
set -uo pipefail
cd "$(dirname "$0")/.."

seconds="${HEAPSCOPE_FUZZ_SECONDS:-60}"
targets=()
control_only=0
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --target) targets+=("$2"); shift 2 ;;
    --control-only) control_only=1; shift ;;
    --no-build) build=0; shift ;;
    *) echo "fuzz-gate: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  targets=(api_sequence_fuzz memory_events_fuzz profiler_fuzz harness_reader_fuzz)
fi
control=profiler_fuzz_planted_uaf
build_dir=build/fuzz
out_root="$build_dir/fuzz-gate"

if [ "$build" = 1 ]; then
  cmake --preset fuzz >/dev/null || exit 1
  to_build=("$control")
  [ "$control_only" = 1 ] || to_build+=("${targets[@]}")
  # Shared machines: stay out of the way of interactive work.
  nice -n 10 cmake --build --preset fuzz -j"${HEAPSCOPE_FUZZ_JOBS:-2}" \
    --target "${to_build[@]}" || exit 1
fi

# Runs target $1 (its corpus: fuzz/corpus/$2) for $seconds; the log lands in $out_root/$1/log.
# Returns libFuzzer's exit status (0: no finding in the time given).
run_target() {
  local name="$1" corpus="fuzz/corpus/$2" dir="$out_root/$1"
  rm -rf "$dir" && mkdir -p "$dir/corpus"
  cp "$corpus"/* "$dir/corpus/" 2>/dev/null || true
  # detect_leaks: on by default with ASan; said anyway, a leak is a finding here.
  ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}" \
    nice -n 10 "$build_dir/fuzz/$name" -max_total_time="$seconds" -timeout=60 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" \
    >"$dir/log" 2>&1
}

# The findings a log names, by the tools' report headers (not by their prose).
findings_of() {
  grep -E '^==[0-9]+==ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)|SUMMARY: UndefinedBehaviorSanitizer|runtime error:|^==[0-9]+== ERROR: libFuzzer|^artifact_prefix=.*Test unit written to' "$1" |
    head -5
}

status=0
rm -rf "$out_root/$control"
run_target "$control" profiler_fuzz
control_status=$?
if [ "$control_status" -ne 0 ] &&
  grep -qE '^==[0-9]+==ERROR: AddressSanitizer: heap-use-after-free' "$out_root/$control/log"; then
  echo "fuzz-gate: positive control fired: $control -> heap-use-after-free (exit $control_status)"
else
  echo "fuzz-gate: FAIL: the positive control $control was not caught (exit $control_status);" \
    "see $out_root/$control/log" >&2
  status=1
fi
[ "$control_only" = 1 ] && exit $status

# The targets run $jobs at a time (each is one process; the machine has that many cores), and
# are reported in order once their batch is done.
jobs="${HEAPSCOPE_FUZZ_JOBS:-2}"
report() {
  local name="$1" rc="$2" runs found
  runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$out_root/$name/log" | grep -oE '[0-9]+$')
  found=$(findings_of "$out_root/$name/log")
  if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
    echo "fuzz-gate: FAIL: $name (exit $rc, ${runs:-?} runs):" >&2
    echo "$found" >&2
    echo "  log and crashing input: $out_root/$name/" >&2
    status=1
  else
    echo "fuzz-gate: ok: $name, ${runs:-?} runs in ${seconds} s"
  fi
}
for ((first = 0; first < ${#targets[@]}; first += jobs)); do
  batch=("${targets[@]:first:jobs}")
  pids=()
  for name in "${batch[@]}"; do
    run_target "$name" "$name" &
    pids+=($!)
  done
  for i in "${!batch[@]}"; do
    wait "${pids[$i]}"
    report "${batch[$i]}" $?
  done
done
exit $status
