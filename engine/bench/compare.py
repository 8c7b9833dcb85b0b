#!/usr/bin/env python3
"""Paired, interleaved comparison of allocators on hs-alloc-bench (python3 stdlib only).

Every round runs the same benchmark binary once per allocator (LD_PRELOAD, or none for glibc),
in an order shuffled by a seeded PRNG, so slow drifts of the machine fall on every allocator
alike. Each run asks Google Benchmark for JSON with a few repetitions; the run's value for a row
is the median of its repetitions. Across rounds the table reports the median, the spread
(min-max and IQR), the ratio to the fastest allocator of the row, and the paired ratio to
mimalloc (median over rounds of engine_round / mimalloc_round, same round = same conditions).

Peak RSS: the binary's --rss-stress workload, run once per allocator per round in the same
shuffled order; the VmHWM the child prints (not wait4's ru_maxrss, which starts from this
process's size and falls short on Linux 6.2+). Then the memory rows (--memory-row NAME:
rounds, large_reuse, mixed_live, pool, startup), each in a process of its own: its peak RSS, and
its RSS a second after the work drained with no allocator call since (what an idle process keeps),
with the ratio to the smallest of the row.

Example (from the repository root, after building):
  python3 engine/bench/compare.py --build-dir build/release --rounds 5

Profiler tax (--set tax): the engine with the profiler compiled out (engine-noprof), compiled in
but stopped (engine), and running at the default 512 KiB interval (engine-prof, HEAPSCOPE_PROF=1),
beside jemalloc with and without its own sampling profiler (prof:true,lg_prof_sample:19) and
gperftools' full tcmalloc with and without sampling (TCMALLOC_SAMPLE_PARAMETER=524288); the
table then gives the paired ratios engine/engine-noprof, engine-prof/engine and the peers' own.
  python3 engine/bench/compare.py --build-dir build/release --set tax --filter 'pair/(16|64|256)/'

Hardening cost (--set hardened): the engine against its hardened build (libheapscope_hardened.so),
and, given --secure-mimalloc PATH (a mimalloc built with MI_SECURE=ON), mimalloc against its own
secure mode; the table then gives the paired ratios engine-hardened/engine and
mimalloc-secure/mimalloc.
"""
import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

from pinned_loop import bootstrap_median_interval  # same folder: the rounds are resampled

LIBDIR = "/usr/lib/x86_64-linux-gnu"
# (name, library or None for glibc, what the benchmark must report as malloc's owner, extra env)
PEERS = [
    ("mimalloc", f"{LIBDIR}/libmimalloc.so.2", "libmimalloc", {}),
    ("jemalloc", f"{LIBDIR}/libjemalloc.so.2", "libjemalloc", {}),
    ("tcmalloc", f"{LIBDIR}/libtcmalloc_minimal.so.4", "libtcmalloc", {}),
    ("glibc", None, "glibc", {}),
]
TAX_PEERS = [
    ("jemalloc", f"{LIBDIR}/libjemalloc.so.2", "libjemalloc", {}),
    ("jemalloc-prof", f"{LIBDIR}/libjemalloc.so.2", "libjemalloc",
     {"MALLOC_CONF": "prof:true,lg_prof_sample:19"}),
    ("tcmalloc-full", f"{LIBDIR}/libtcmalloc.so.4", "libtcmalloc", {}),
    ("tcmalloc-prof", f"{LIBDIR}/libtcmalloc.so.4", "libtcmalloc",
     {"TCMALLOC_SAMPLE_PARAMETER": "524288"}),
]
TAX_PAIRS = [("engine", "engine-noprof"), ("engine-prof", "engine"),
             ("jemalloc-prof", "jemalloc"), ("tcmalloc-prof", "tcmalloc-full")]
HARDENED_PAIRS = [("engine-hardened", "engine"), ("mimalloc-secure", "mimalloc")]
PAIRS = {"tax": TAX_PAIRS, "hardened": HARDENED_PAIRS}
SCHEMA_VERSION = 1


def quantile(values, q):
    """Linear-interpolation quantile of a non-empty list (q in [0, 1])."""
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(values):
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "q1": quantile(values, 0.25),
        "q3": quantile(values, 0.75),
        "n": len(values),
    }


def child_env(lib, expect, extra):
    env = dict(os.environ)
    for key in ("LD_PRELOAD", "MALLOC_CONF", "TCMALLOC_SAMPLE_PARAMETER"):
        env.pop(key, None)
    for key in list(env):
        if key.startswith("HEAPSCOPE_"):
            del env[key]
    if lib:
        env["LD_PRELOAD"] = lib
    env["HS_BENCH_EXPECT_LIB"] = "" if expect == "glibc" else expect
    env.update(extra)
    return env


def run_bench(bench, lib, expect, extra, args, pin=None):
    # taskset keeps the run on one CPU: with the rounds interleaved, the minimum over rounds
    # is then a stable estimate of the cost (noise only ever adds time).
    cmd = (["taskset", "-c", pin] if pin else []) + [bench, "--benchmark_format=json"] + args
    proc = subprocess.run(cmd, env=child_env(lib, expect, extra), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    if not proc.stdout.strip():
        # Google Benchmark prints nothing on stdout when --benchmark_filter matches no row.
        raise RuntimeError(f"no benchmark output ({proc.stderr.strip()[-200:] or 'filter matched nothing?'})")
    data = json.loads(proc.stdout)
    found = data.get("context", {}).get("malloc_library", "?")
    if expect not in found:
        raise RuntimeError(f"expected allocator {expect}, the benchmark saw {found}")
    per_row = {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"]).removesuffix("/real_time")
        per_row.setdefault(name, []).append(float(b["real_time"]))  # time_unit is ns
    return {row: statistics.median(v) for row, v in per_row.items()}


def run_rss(bench, lib, expect, extra):
    """Runs --rss-stress and returns the child's peak RSS in KiB: the VmHWM it prints, not
    wait4's ru_maxrss, which starts from this Python process's size (kept across exec) and on
    Linux 6.2 and later falls short (per-CPU counters it does not sum)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.posix_spawn(bench, [bench, "--rss-stress"], child_env(lib, expect, extra),
                             file_actions=[(os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                                           (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
        _, status, _ = os.wait4(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            text = err.read().decode(errors="replace").strip()[-400:]
            raise RuntimeError(f"--rss-stress exited {code}: {text}")
        out.seek(0)
        lines = out.read().decode().strip().splitlines()
    if not lines:
        raise RuntimeError("--rss-stress printed no peak")
    return json.loads(lines[-1])["peak_kib"]


MEMORY_ROWS = ["rounds", "large_reuse", "mixed_live", "pool", "startup"]


def run_memory_row(bench, lib, expect, extra, row):
    """Runs --memory-row ROW; returns the child's {peak_kib, drained_kib, idle_kib}.

    The peak is the child's VmHWM: wait4's ru_maxrss would include this Python process's own
    resident size (kept across exec), which the small rows stay below."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.posix_spawn(bench, [bench, "--memory-row", row], child_env(lib, expect, extra),
                             file_actions=[(os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                                           (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
        _, status, usage = os.wait4(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if code != 0:
            text = err.read().decode(errors="replace").strip()[-300:]
            raise RuntimeError(f"--memory-row {row} exited {code}: {text}")
        data = json.loads(out.read().decode().strip().splitlines()[-1])
    del usage
    return {k: data[k] for k in ("peak_kib", "drained_kib", "idle_kib")}


def fmt_ns(x):
    return f"{x:.1f}" if x < 1000 else f"{x:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build/release", help="CMake build dir (finds both files)")
    ap.add_argument("--bench", help="hs-alloc-bench path (default: <build-dir>/engine/bench/hs-alloc-bench)")
    ap.add_argument("--engine-lib", help="libheapscope.so (default: <build-dir>/engine/libheapscope.so)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--min-time", default="0.1", help="--benchmark_min_time per repetition (s)")
    ap.add_argument("--filter", default="", help="--benchmark_filter regex")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pin", help="run each benchmark under taskset -c PIN (e.g. 1)")
    ap.add_argument("--no-rss", action="store_true", help="skip the peak-RSS runs")
    ap.add_argument("--only", default="", help="comma-separated allocator names to run")
    ap.add_argument("--json-out", help="write every measurement here as JSON")
    ap.add_argument("--set", choices=["peers", "tax", "hardened"], default="peers",
                    help="peers: engine vs mimalloc/jemalloc/tcmalloc/glibc; tax: profiler cost;"
                         " hardened: the hardened build's cost")
    ap.add_argument("--secure-mimalloc", help="--set hardened: a mimalloc built with MI_SECURE=ON")
    ap.add_argument("--mimalloc", help="--set hardened: the same mimalloc built without it (default:"
                                       " the system's)")
    opts = ap.parse_args()

    bench = opts.bench or os.path.join(opts.build_dir, "engine/bench/hs-alloc-bench")
    engine_lib = opts.engine_lib or os.path.join(opts.build_dir, "engine/libheapscope.so")
    if not os.access(bench, os.X_OK):
        sys.exit(f"compare: benchmark binary not found: {bench}")
    engine_lib = os.path.abspath(engine_lib)
    noprof_lib = os.path.join(os.path.dirname(engine_lib), "libheapscope_noprof.so")
    if opts.set == "tax":
        allocators = [("engine-noprof", noprof_lib, "libheapscope_noprof", {}),
                      ("engine", engine_lib, "libheapscope", {}),
                      ("engine-prof", engine_lib, "libheapscope", {"HEAPSCOPE_PROF": "1"})]
        allocators += TAX_PEERS
    elif opts.set == "hardened":
        hardened_lib = os.path.join(os.path.dirname(engine_lib), "libheapscope_hardened.so")
        allocators = [("engine", engine_lib, "libheapscope", {}),
                      ("engine-hardened", hardened_lib, "libheapscope_hardened", {})]
        if opts.secure_mimalloc:
            plain = os.path.abspath(opts.mimalloc) if opts.mimalloc else PEERS[0][1]
            allocators += [("mimalloc", plain, "libmimalloc", {}),
                           ("mimalloc-secure", os.path.abspath(opts.secure_mimalloc), "libmimalloc", {})]
    else:
        allocators = [("engine", engine_lib, "libheapscope", {})] + PEERS
    if opts.only:
        wanted = set(opts.only.split(","))
        allocators = [a for a in allocators if a[0] in wanted]
    present = []
    for name, lib, expect, extra in allocators:
        if lib and not os.path.exists(lib):
            print(f"compare: {name}: library {lib} missing, skipped", file=sys.stderr)
            continue
        present.append((name, lib, expect, extra))
    names = [a[0] for a in present]

    bench_args = [f"--benchmark_repetitions={opts.repetitions}", f"--benchmark_min_time={opts.min_time}"]
    if opts.filter:
        bench_args.append(f"--benchmark_filter={opts.filter}")

    times = {n: {} for n in names}   # allocator -> row -> [per-round medians]
    rss = {n: [] for n in names}     # allocator -> [KiB per round]
    memory = {n: {} for n in names}  # allocator -> row -> [{peak_kib, drained_kib, idle_kib}]
    failures = {}
    rng = random.Random(opts.seed)
    started = time.time()
    for r in range(opts.rounds):
        order = list(present)
        rng.shuffle(order)
        print(f"round {r + 1}/{opts.rounds}: {' '.join(a[0] for a in order)}", file=sys.stderr)
        for name, lib, expect, extra in order:
            if name in failures:
                continue
            try:
                for row, ns in run_bench(bench, lib, expect, extra, bench_args, opts.pin).items():
                    times[name].setdefault(row, []).append(ns)
                if not opts.no_rss:
                    rss[name].append(run_rss(bench, lib, expect, extra))
                    for row in MEMORY_ROWS:
                        memory[name].setdefault(row, []).append(
                            run_memory_row(bench, lib, expect, extra, row))
            except (RuntimeError, json.JSONDecodeError) as e:
                failures[name] = str(e)
                print(f"compare: {name} failed: {e}", file=sys.stderr)

    rows = []
    for n in names:
        for row in times[n]:
            if row not in rows:
                rows.append(row)
    report = {"schema_version": SCHEMA_VERSION, "machine": {
        "host": platform.node(), "cpus": os.cpu_count(), "kernel": platform.release()},
        "command": " ".join(sys.argv), "rounds": opts.rounds, "repetitions": opts.repetitions,
        "min_time": opts.min_time, "seed": opts.seed, "failures": failures,
        "rows": {}, "rss_kib": {}}

    print(f"\nhs-alloc-bench: median ns/op over {opts.rounds} rounds "
          f"(each = median of {opts.repetitions} reps), spread = min-max over rounds")
    print("ratio: x fastest allocator of the row; paired ratio vs mimalloc in [brackets]\n")
    header = "| row | " + " | ".join(names) + " |"
    print(header)
    print("|" + "---|" * (len(names) + 1))
    for row in rows:
        summaries = {n: summarize(times[n][row]) for n in names if times[n].get(row)}
        best = min(s["median"] for s in summaries.values())
        cells = []
        report["rows"][row] = {}
        for n in names:
            s = summaries.get(n)
            if s is None:
                cells.append("n/a")
                continue
            cell = f"{fmt_ns(s['median'])} ({fmt_ns(s['min'])}-{fmt_ns(s['max'])}) x{s['median'] / best:.2f}"
            entry = dict(s, ratio_to_fastest=s["median"] / best, per_round=times[n][row])
            mi = times.get("mimalloc", {}).get(row)
            if mi and n != "mimalloc" and len(mi) == len(times[n][row]):
                paired = statistics.median(a / b for a, b in zip(times[n][row], mi))
                entry["paired_ratio_to_mimalloc"] = paired
                cell += f" [{paired:.2f}]"
            cells.append(cell)
            report["rows"][row][n] = entry
        print(f"| {row} | " + " | ".join(cells) + " |")

    if opts.set in PAIRS:
        print("\npaired ratios (median over rounds of A_round / B_round [its 95% bootstrap"
              " interval]; min-max over rounds; best = fastest A round / fastest B round)\n")
        pairs = [(a, b) for a, b in PAIRS[opts.set] if a in names and b in names]
        print("| row | " + " | ".join(f"{a} / {b}" for a, b in pairs) + " |")
        print("|" + "---|" * (len(pairs) + 1))
        report["paired"] = {}
        for row in rows:
            cells = []
            for a, b in pairs:
                xa, xb = times[a].get(row), times[b].get(row)
                if not xa or not xb or len(xa) != len(xb):
                    cells.append("n/a")
                    continue
                ratios = [x / y for x, y in zip(xa, xb)]
                med = statistics.median(ratios)
                best = min(xa) / min(xb)
                low, high = bootstrap_median_interval(ratios, 10_000, random.Random(opts.seed))
                report["paired"].setdefault(row, {})[f"{a}/{b}"] = dict(
                    summarize(ratios), per_round=ratios, ratio_of_fastest=best,
                    median_interval_95=[low, high])
                cells.append(f"{med:.3f} [{low:.3f}, {high:.3f}] ({min(ratios):.3f}-{max(ratios):.3f})"
                             f" best {best:.3f}")
            print(f"| {row} | " + " | ".join(cells) + " |")

    if not opts.no_rss and any(rss.values()):
        print("\npeak RSS of --rss-stress (MiB, median over rounds, min-max; ratio vs mimalloc)\n")
        print(header)
        print("|" + "---|" * (len(names) + 1))
        mi = statistics.median(rss["mimalloc"]) if rss.get("mimalloc") else None
        cells = []
        for n in names:
            if not rss[n]:
                cells.append("n/a")
                continue
            s = summarize(rss[n])
            report["rss_kib"][n] = dict(s, per_round=rss[n])
            cell = f"{s['median'] / 1024:.1f} ({s['min'] / 1024:.1f}-{s['max'] / 1024:.1f})"
            if mi:
                cell += f" x{s['median'] / mi:.2f}"
            cells.append(cell)
        print("| peak RSS | " + " | ".join(cells) + " |")

        print("\nmemory rows (MiB, median over rounds, peak's min-max; x = ratio to the smallest of"
              " the row): peak RSS / RSS one second after the work drained, no allocator call"
              " since\n")
        print(header)
        print("|" + "---|" * (len(names) + 1))
        report["memory_rows_kib"] = {}
        for row in MEMORY_ROWS:
            med = {}
            for n in names:
                runs = memory[n].get(row)
                if runs:
                    med[n] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
                    report["memory_rows_kib"].setdefault(row, {})[n] = dict(med[n], per_round=runs)
            if not med:
                continue
            least_peak = min(m["peak_kib"] for m in med.values())
            least_idle = min(m["idle_kib"] for m in med.values())
            cells = []
            for n in names:
                if n not in med:
                    cells.append("n/a")
                    continue
                m = med[n]
                # A few hundred KiB move between runs with the address layout alone
                # (engine/docs/allocator.md), so the spread says which ratios mean anything.
                peaks = [r["peak_kib"] for r in memory[n][row]]
                cells.append(f"{m['peak_kib'] / 1024:.1f} ({min(peaks) / 1024:.1f}-"
                             f"{max(peaks) / 1024:.1f}) x{m['peak_kib'] / least_peak:.2f} / "
                             f"{m['idle_kib'] / 1024:.1f} x{m['idle_kib'] / least_idle:.2f}")
            print(f"| {row} | " + " | ".join(cells) + " |")

    for n, why in failures.items():
        print(f"\n{n}: FAILED: {why}")
    print(f"\n({time.time() - started:.0f} s)", file=sys.stderr)
    if opts.json_out:
        with open(opts.json_out, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
