#!/usr/bin/env python3
"""Every allocator in one process: the engine against each peer on the loop rows (stdlib only).

compare.py runs hs-alloc-bench once per allocator per round, in processes seconds apart; on a
shared VM a row's median then moves by tens of percent from one process to the next (the
engine's mixed_live/20000 spanned 21.6-64.2 ns over 10 rounds), more than the differences the
targets are about. Here hs-ab-loop loads the engine, jemalloc and tcmalloc into the
same processes (dlopen, each library bound to its own malloc/free) beside the process's own
allocator (glibc), and alternates them in blocks about a millisecond long, so every block of
one allocator has a block of every other beside it on the same machine state. The rows are the
ones a loop can replay identically for every allocator: a malloc/write/free pair of 16 and 64
bytes (pair/16, pair/64), churn over 1000 live blocks of 16-512 B (churn/1000x16-512) and the
20,000-block mixed live set (mixed_live/20000). Cross-thread, realloc, program-shaped and memory
rows stay with compare.py.

For each row: the engine's median ns per op, each peer's paired ratio to the engine (median
over measuring processes of the per-block ratios, 95% bootstrap interval; above 1 = the peer is
slower), and the engine against the fastest allocator of the row (1.00 when it is the fastest;
"tied" when the interval of the peer nearest to it reaches 1).

What one process cannot show: every allocator's live set shares the caches with the others'
(the mixed row runs ~2x slower per op than alone), and a library built to replace malloc may
run differently when loaded beside others: mimalloc's pair rows measured 0.96 of the engine's
in one run and 1.5-2.3x in others, where compare.py puts it at parity, so mimalloc is left out
unless --only names it. tcmalloc's ratios agree in direction with compare.py's paired ones
(pair/16, pair/64, churn: 1.13-1.18 here, 1.02-1.09 between processes). So this table answers
"which is faster under the same conditions, to a few percent", and compare.py, with each
allocator alone in its process, stays the reference for absolute figures.

  python3 engine/bench/in_process.py --build-dir build/release [--blocks 400] [--pairs 10000]
      [--sizes 16,64,churn,mixed] [--only mimalloc,tcmalloc] [--json-out FILE]

A peer whose library is missing is reported and skipped. jemalloc uses initial-exec TLS, which
a dlopen'ed library gets only from the room glibc leaves for it: this script raises that room
(GLIBC_TUNABLES=glibc.rtld.optional_static_tls) for hs-ab-loop.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from compare import PEERS

STATIC_TLS_TUNABLE = "glibc.rtld.optional_static_tls=16384"
ROW_NAMES = {"16": "pair/16", "64": "pair/64", "churn": "churn/1000x16-512",
             "mixed": "mixed_live/20000"}


# Peers measured not to run as they do when preloaded, left out unless named with --only.
NOT_COMPARABLE = {
    "mimalloc": "takes a slower path when dlopen'ed beside other allocators (its pair rows "
                "1.5-2.3x the engine's in most runs, where compare.py puts them at parity)",
}


def peers_present(only):
    """(name, hs-ab-loop library argument) for every peer asked for whose library exists."""
    found = []
    for name, lib, _, _ in PEERS:
        if only and name not in only:
            continue
        if name in NOT_COMPARABLE:
            if not only:
                continue
            print(f"in_process: {name} {NOT_COMPARABLE[name]}: read its column with care",
                  file=sys.stderr)
        if lib is None:
            found.append((name, "system"))
        elif os.path.exists(lib):
            found.append((name, lib))
        else:
            print(f"in_process: {name}: library {lib} missing, skipped", file=sys.stderr)
    return found


def child_env():
    env = dict(os.environ)
    tunables = env.get("GLIBC_TUNABLES", "")
    if "optional_static_tls" not in tunables:
        env["GLIBC_TUNABLES"] = f"{tunables}:{STATIC_TLS_TUNABLE}" if tunables else STATIC_TLS_TUNABLE
    env.pop("LD_PRELOAD", None)  # "system" must be glibc, as in compare.py's glibc column
    return env


def row_name(workload):
    if workload["workload"] == "pair":
        size = str(workload["size"])
        return ROW_NAMES.get(size, f"pair/{size}")
    return ROW_NAMES[workload["workload"]]


def summarize(report):
    """Rows of (row, engine median ns, {peer: (ratio, low, high)}, engine/fastest, fastest)."""
    rows = []
    for workload in report["sizes"]:
        libraries = workload["libraries"]
        engine = libraries[0]
        median = statistics.median(engine["ns_per_pair"])
        ratios = {}
        for peer in libraries[1:]:
            r = peer["ratio_to_first"]
            ratios[peer["name"]] = (r["estimate"], r["ci95"][0], r["ci95"][1])
        fastest, best = "engine", 1.0
        for name, (ratio, _, _) in ratios.items():
            if ratio < best:
                fastest, best = name, ratio
        # An interval reaching 1 shows neither side faster: a tie, whichever point is lower.
        tied = False
        if fastest != "engine":
            tied = ratios[fastest][2] >= 1.0
        else:
            reaching = [(ratio, name) for name, (ratio, low, _) in ratios.items() if low <= 1.0]
            if reaching:
                fastest, tied = min(reaching)[1], True
        rows.append((row_name(workload), median, ratios, 1.0 / best, fastest, tied))
    return rows


def print_table(rows, peers):
    print("\nhs-ab-loop, every allocator in the same processes: engine median ns/op; each peer's "
          "paired ratio to the engine [95% CI] (> 1: slower than the engine)\n")
    print("| row | engine ns | " + " | ".join(peers) + " | engine / fastest |")
    print("|---|---|" + "---|" * len(peers) + "---|")
    for row, median, ratios, versus_fastest, fastest, tied in rows:
        cells = []
        for peer in peers:
            if peer in ratios:
                ratio, low, high = ratios[peer]
                cells.append(f"{ratio:.2f} [{low:.2f}-{high:.2f}]")
            else:
                cells.append("-")
        if fastest == "engine":
            verdict = "1.00 (fastest)"
        elif tied:
            verdict = f"{versus_fastest:.2f} (tied with {fastest})"
        else:
            verdict = f"{versus_fastest:.2f} ({fastest} faster)"
        print(f"| {row} | {median:.1f} | " + " | ".join(cells) + f" | {verdict} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build/release", help="CMake build dir")
    ap.add_argument("--ab-loop", help="hs-ab-loop path (default: <build-dir>/engine/bench/hs-ab-loop)")
    ap.add_argument("--engine-lib", help="libheapscope.so (default: <build-dir>/engine/libheapscope.so)")
    ap.add_argument("--sizes", default="16,64,churn,mixed", help="hs-ab-loop --sizes")
    ap.add_argument("--blocks", type=int, default=400, help="timed blocks per allocator and row")
    ap.add_argument("--pairs", type=int, default=10000, help="ops per block")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated peer names")
    ap.add_argument("--json-out", help="keep hs-ab-loop's report (every block) here")
    opts = ap.parse_args()

    ab_loop = opts.ab_loop or os.path.join(opts.build_dir, "engine/bench/hs-ab-loop")
    engine_lib = os.path.abspath(opts.engine_lib or os.path.join(opts.build_dir, "engine/libheapscope.so"))
    if not os.access(ab_loop, os.X_OK):
        sys.exit(f"in_process: hs-ab-loop not found: {ab_loop}")
    if not os.path.exists(engine_lib):
        sys.exit(f"in_process: engine library not found: {engine_lib}")
    peers = peers_present(set(opts.only.split(",")) if opts.only else set())
    if not peers:
        sys.exit("in_process: no peer to compare with")

    with tempfile.TemporaryDirectory() as tmp:
        report_path = opts.json_out or os.path.join(tmp, "ab-loop.json")
        cmd = [ab_loop, "--sizes", opts.sizes, "--blocks", str(opts.blocks), "--pairs",
               str(opts.pairs), "--seed", str(opts.seed), "--json", report_path,
               f"engine={engine_lib}"] + [f"{name}={lib}" for name, lib in peers]
        print("in_process: " + " ".join(cmd), file=sys.stderr)
        # hs-ab-loop's own table goes to stderr: this script prints the summary on stdout.
        done = subprocess.run(cmd, env=child_env(), stdout=sys.stderr, check=False)
        if done.returncode != 0:
            sys.exit(f"in_process: hs-ab-loop failed (exit status {done.returncode})")
        with open(report_path) as f:
            report = json.load(f)
    print_table(summarize(report), [name for name, _ in peers])


if __name__ == "__main__":
    main()
