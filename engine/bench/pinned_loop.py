#!/usr/bin/env python3
"""A malloc/free loop timed under LD_PRELOAD of each allocator, pinned to one CPU, interleaved.

The smallest cost measurement there is: a C program (compiled here with cc, no allocator
linked) times N pairs of malloc(size), a one-byte write and free(), after a warm-up. Every
round runs each allocator once, in a shuffled order, under `taskset -c CPU`. Reported per
size: the fastest round and the median (ns per pair), and against the first allocator named
the paired median ratio with its 95% bootstrap interval (rounds resampled with replacement,
seeded) and the ratio of fastest rounds. On a shared VM the fastest round is
the steadier figure: noise only ever adds time.

Allocators: engine, engine-noprof, engine-prof (HEAPSCOPE_PROF=1), mimalloc, tcmalloc,
jemalloc, jemalloc-prof (its sampling profiler at 512 KiB), glibc, and file:PATH for any
other library (e.g. a copy built from another commit, to pair two versions).

Example (after building the Release preset):
  python3 engine/bench/pinned_loop.py --build-dir build/release --sizes 16,64,256 \\
      --allocators engine-noprof,engine,engine-prof --rounds 15
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile

LOOP_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static uint64_t state = 0x5eed;
static uint64_t splitmix64(void) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static size_t churn_size(void) { return 16 + splitmix64() % 497; }  /* 16..512 */
enum { kSlots = 1000 };
static void* slots[kSlots];
static void churn(long iters) {
  for (long i = 0; i < iters; ++i) {
    size_t k = splitmix64() % kSlots;
    free(slots[k]);
    char* p = malloc(churn_size());
    p[0] = 1;
    slots[k] = p;
  }
}
int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int is_churn = strcmp(argv[1], "churn") == 0;
  size_t n = strtoul(argv[1], 0, 10);
  long iters = strtol(argv[2], 0, 10);
  void* volatile sink;
  if (is_churn) {
    for (int k = 0; k < kSlots; ++k) slots[k] = malloc(churn_size());
    churn(100000);
  } else {
    for (long i = 0; i < 100000; ++i) { void* p = malloc(n); *(volatile char*)p = 1; free(p); }
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  if (is_churn) {
    churn(iters);
  } else {
    for (long i = 0; i < iters; ++i) { void* p = malloc(n); *(volatile char*)p = 1; sink = p; free(p); }
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.4f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iters);
  return 0;
}
"""

LIB_DIR = "/usr/lib/x86_64-linux-gnu"


def allocator_table(build_dir):
    engine = os.path.abspath(os.path.join(build_dir, "engine"))
    return {
        "engine": (os.path.join(engine, "libheapscope.so"), {}),
        "engine-noprof": (os.path.join(engine, "libheapscope_noprof.so"), {}),
        "engine-prof": (os.path.join(engine, "libheapscope.so"), {"HEAPSCOPE_PROF": "1"}),
        "mimalloc": (os.path.join(LIB_DIR, "libmimalloc.so.2"), {}),
        "tcmalloc": (os.path.join(LIB_DIR, "libtcmalloc_minimal.so.4"), {}),
        "jemalloc": (os.path.join(LIB_DIR, "libjemalloc.so.2"), {}),
        # jemalloc's own sampling heap profiler at the same mean interval (2^19 = 512 KiB).
        "jemalloc-prof": (os.path.join(LIB_DIR, "libjemalloc.so.2"),
                          {"MALLOC_CONF": "prof:true,lg_prof_sample:19"}),
        "glibc": (None, {}),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build/release")
    ap.add_argument("--sizes", default="16,64,256",
                    help="comma-separated block sizes; 'churn' runs the small live-set churn instead")
    ap.add_argument("--allocators", default="engine,mimalloc,tcmalloc,jemalloc")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--pairs", type=int, default=20_000_000, help="malloc/free pairs per run")
    ap.add_argument("--cpu", default="1", help="taskset -c CPU")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples of the rounds")
    opts = ap.parse_args()

    table = allocator_table(opts.build_dir)
    names = opts.allocators.split(",")
    for name in names:
        if name.startswith("file:"):  # any other build of a library, e.g. to pair two commits
            table[name] = (os.path.abspath(name[len("file:"):]), {})
        if name not in table:
            sys.exit(f"pinned_loop: unknown allocator {name!r} (known: {', '.join(table)})")
        lib = table[name][0]
        if lib is not None and not os.path.exists(lib):
            sys.exit(f"pinned_loop: {name}: {lib} not found")
    sizes = opts.sizes.split(",")
    for size in sizes:
        if size != "churn" and not size.isdigit():
            sys.exit(f"pinned_loop: --sizes takes byte counts or 'churn', not {size!r}")
    rng = random.Random(opts.seed)
    with tempfile.TemporaryDirectory() as tmp:
        source, binary = os.path.join(tmp, "loop.c"), os.path.join(tmp, "loop")
        with open(source, "w") as f:
            f.write(LOOP_C)
        subprocess.run(["cc", "-O2", source, "-o", binary], check=True)
        for size in sizes:
            times = {n: [] for n in names}
            for _ in range(opts.rounds):
                order = names[:]
                rng.shuffle(order)
                for name in order:
                    lib, extra = table[name]
                    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
                    if lib:
                        env["LD_PRELOAD"] = lib
                    env.update(extra)
                    out = subprocess.run(["taskset", "-c", opts.cpu, binary, size, str(opts.pairs)],
                                         env=env, capture_output=True, text=True, check=True)
                    times[name].append(float(out.stdout))
            base = names[0]
            label = "churn (1000 live blocks of 16-512 B, free + malloc a random slot)" \
                if size == "churn" else f"{size} B"
            print(f"{label} (ns per pair; fastest round, median; vs {base}: paired median "
                  f"[95% bootstrap interval], fastest/fastest)")
            for name in names:
                ratios = [a / b for a, b in zip(times[name], times[base])]
                low, high = bootstrap_median_interval(ratios, opts.resamples, rng)
                print(f"  {name:14s} {min(times[name]):6.2f} {statistics.median(times[name]):6.2f}"
                      f"   x{statistics.median(ratios):.3f} [{low:.3f}, {high:.3f}]"
                      f"  x{min(times[name]) / min(times[base]):.3f}")


def bootstrap_median_interval(values, resamples, rng):
    """Percentile bootstrap 95% interval of the median: the rounds are the resampled unit."""
    n = len(values)
    if n < 2:
        return values[0], values[0]
    medians = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    return medians[int(0.025 * resamples)], medians[min(resamples - 1, int(0.975 * resamples))]


if __name__ == "__main__":
    main()
