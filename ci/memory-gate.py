#!/usr/bin/env python3
"""Memory gate: the engine's peak RSS and thread count on a fixed multi-threaded churn must not
grow past a committed baseline.

The churn is `hs-alloc-bench --rss-stress` (2 threads, fixed seed: live sets grow, shrink to a
tenth and grow again, one free in eight made by the other thread) with the engine preloaded.
Each run's peak RSS is the child's own VmHWM, which it prints (not wait4's ru_maxrss: that
starts from this Python process's size, and on Linux 6.2 and later falls short of /proc's
sums); its thread count is sampled from
/proc/<pid>/status every 2 ms (the allocator must start no threads of its own). The gate takes
the minimum peak over --runs runs (the least disturbed by neighbours on a shared machine),
prints the spread, and fails when that minimum exceeds the baseline by more than its tolerance,
or when more threads than the program's own were ever alive.

Usage:
  memory-gate.py --bench PATH --engine LIB [--baseline JSON] [--runs N]
  memory-gate.py ... --self-test   an injected-leak shim (every 64th free dropped) preloaded in
                                   front of the engine must fail the gate, the engine alone pass
  memory-gate.py ... --measure     print the figures for a new baseline, gate nothing
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BASELINE = os.path.join(HERE, "memory-baseline.json")

LEAK_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
/* Planted leak: every 64th free() is dropped; the rest reach the allocator behind this shim. */
static void (*next_free)(void*);
static unsigned long frees;
void free(void* p) {
  if (next_free == NULL) next_free = (void (*)(void*))dlsym(RTLD_NEXT, "free");
  if (p != NULL && (__atomic_add_fetch(&frees, 1, __ATOMIC_RELAXED) & 63) == 0) return;
  next_free(p);
}
"""


def threads_of(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def one_run(bench, preload):
    env = dict(os.environ, LD_PRELOAD=preload)
    child = subprocess.Popen([bench, "--rss-stress"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    max_threads = 0
    while True:
        pid, status, _ = os.wait4(child.pid, os.WNOHANG)
        if pid != 0:
            break
        max_threads = max(max_threads, threads_of(child.pid))
        time.sleep(0.002)
    stdout = child.stdout.read().decode(errors="replace")
    stderr = child.stderr.read().decode(errors="replace")
    child.stdout.close()
    child.stderr.close()
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        raise RuntimeError(f"{bench} --rss-stress failed (status {status}): {stderr.strip()}")
    lines = stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"{bench} --rss-stress printed no peak")
    return json.loads(lines[-1])["peak_kib"], max_threads


def measure(bench, preload, runs):
    peaks, threads = [], []
    for _ in range(runs):
        peak, t = one_run(bench, preload)
        peaks.append(peak)
        threads.append(t)
    return peaks, max(threads)


def judge(label, peaks, max_threads, baseline):
    limit = baseline["peak_rss_kib"] * (1 + baseline["tolerance"])
    low = min(peaks)
    print(f"memory-gate [{label}]: peak RSS KiB min {low} median {statistics.median(peaks):.0f} "
          f"max {max(peaks)} over {len(peaks)} runs; limit {limit:.0f} (baseline "
          f"{baseline['peak_rss_kib']} +{baseline['tolerance']:.0%}); threads max {max_threads} "
          f"(program's own: {baseline['program_threads']})")
    failures = []
    if low > limit:
        failures.append(f"peak RSS {low} KiB over the limit {limit:.0f} KiB")
    if max_threads > baseline["program_threads"]:
        failures.append(f"{max_threads} threads alive, the program starts "
                        f"{baseline['program_threads']}")
    for f in failures:
        print(f"memory-gate [{label}]: FAIL: {f}", file=sys.stderr)
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", required=True, help="hs-alloc-bench")
    ap.add_argument("--engine", required=True, help="libheapscope.so")
    ap.add_argument("--baseline", default=DEFAULT_BASELINE)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--measure", action="store_true")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # keep stdout and stderr lines in order
    for path in (args.bench, args.engine):
        if not os.path.isfile(path):
            print(f"memory-gate: {path}: no such file", file=sys.stderr)
            return 2
    if args.runs < 1:
        print("memory-gate: --runs must be at least 1", file=sys.stderr)
        return 2
    try:
        with open(args.baseline) as f:
            baseline = json.load(f)
        for key in ("peak_rss_kib", "tolerance", "program_threads"):
            float(baseline[key])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"memory-gate: baseline {args.baseline} unreadable: {e}", file=sys.stderr)
        return 2

    if args.measure:
        peaks, threads = measure(args.bench, args.engine, args.runs)
        print(json.dumps({"peak_rss_kib": min(peaks), "runs": peaks, "threads": threads}))
        return 0
    if not args.self_test:
        peaks, threads = measure(args.bench, args.engine, args.runs)
        return 0 if judge("engine", peaks, threads, baseline) else 1

    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "leak_shim.c")
        shim = os.path.join(tmp, "leak_shim.so")
        with open(source, "w") as f:
            f.write(LEAK_SHIM)
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", source, "-o",
                        shim, "-ldl"], check=True)
        peaks, threads = measure(args.bench, f"{shim}:{args.engine}", 1)
        leak_caught = not judge("engine + planted leak", peaks, threads, baseline)
        peaks, threads = measure(args.bench, args.engine, args.runs)
        clean_passes = judge("engine", peaks, threads, baseline)
    print(f"memory-gate self-test: planted leak {'caught' if leak_caught else 'NOT caught'}, "
          f"engine alone {'passes' if clean_passes else 'fails'}")
    return 0 if leak_caught and clean_passes else 1


if __name__ == "__main__":
    sys.exit(main())
