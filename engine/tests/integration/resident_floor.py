#!/usr/bin/env python3
"""Fails when preloading an engine library into a program that allocates almost nothing adds
more than a fixed bound to its peak resident set (engine/README.md, "Dependencies").

The program runs with and without LD_PRELOAD=<library>, interleaved, several times; the peak
RSS of each side is its minimum over the runs (the noise on this machine only ever adds
pages), and the difference must stay within the bound. PEAK_RSS (peak_rss.c) measures: the
child's VmHWM at its exit stop, exact where ru_maxrss runs short (Linux 6.2 and later), and
from a small parent, as ru_maxrss would start from its parent's resident set.

usage: resident_floor.py PEAK_RSS BOUND_KIB RUNS LIBRARY... [-- PROGRAM ARGS...]
"""
import os
import subprocess
import sys


def peak_rss_kib(helper, preload, program, env):
    out = subprocess.run([helper, preload] + program, env=env, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return int(out.split()[-1])


def main():
    args = sys.argv[1:]
    program = ["/bin/true"]
    if "--" in args:
        program = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    if len(args) < 4:
        sys.exit(__doc__)
    helper, bound, runs, libraries = args[0], int(args[1]), int(args[2]), args[3:]
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith("HEAPSCOPE_") and k != "LD_PRELOAD"}
    failed = False
    for library in libraries:
        if not os.path.isfile(library):
            sys.exit(f"resident_floor: {library} not built")
        without, with_lib = [], []
        for _ in range(runs):
            without.append(peak_rss_kib(helper, "", program, base_env))
            with_lib.append(peak_rss_kib(helper, library, program, base_env))
        added = min(with_lib) - min(without)
        verdict = "ok" if added <= bound else "FAIL"
        print(f"{os.path.basename(library)}: {' '.join(program)} peak RSS {min(with_lib)} KiB "
              f"preloaded vs {min(without)} KiB without (min of {runs}): +{added} KiB, "
              f"bound {bound}: {verdict}")
        failed |= added > bound
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
