// hs-alloc-bench: allocator micro-benchmarks that call the C library's malloc/free/realloc, so
// the same binary measures whichever allocator LD_PRELOAD puts in front of glibc.
//
// Rows (all times are wall-clock ns per operation):
//   pair/<size>         malloc(size), touch one byte, free                     (one op = a pair)
//   churn/1000x16-512   ring of 1000 live blocks, free + malloc a random slot   (one op = a pair)
//   xthread/64          producer mallocs, consumer thread frees, SPSC ring     (one op = a pair)
//   xthread/16-512      same with random sizes
//   realloc_growth      malloc(16), realloc by ~1.5x up to 64 KiB, free         (one op = a chain)
//   rounds/2x2000       2 threads created, making 1000 objects each, freeing the other's
//                       leftovers (program_rows.cc, mstress-like)                (one op = a round)
//   large_reuse/4-32MiB malloc a 4-32 MiB buffer, write every page, free          (one op = a
//   buffer) mixed_live/20000    replace a random block of a 20 000-block mixed live set   (one op =
//   a pair)
//   pool/8x1500         8 threads started together free their share of the last round's
//                       leftovers, make 1500 blocks of 16 B-1 MiB each, keep a tenth
//                       (program_rows.cc: a pool re-created for each batch)   (one op = a round)
//
// Modes besides the usual Google Benchmark flags:
//   --smoke       every row for ~10 ms plus a tiny RSS stress run (what CTest runs)
//   --rss-stress  only the RSS stress workload; prints {"peak_kib": N}, its own VmHWM
//   --memory-row NAME  one program-shaped memory row (rounds, large_reuse, mixed_live, pool,
//                 startup):
//                 prints its peak, drained and idle RSS as a JSON line (compare.py)
// Environment: HS_BENCH_EXPECT_LIB=<substring> fails unless a mapped library path contains it
// (proves LD_PRELOAD took effect).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"

namespace {

using hs_bench::SplitMix64;

bool g_failed = false;  // set by any row whose own checks fail; main returns non-zero

void fail(benchmark::State& state, const char* why) {
  g_failed = true;
  state.SkipWithError(why);
}

// ---- malloc/free pairs --------------------------------------------------------------------------
void bm_pair(benchmark::State& state, size_t size) {
  for (auto _ : state) {
    auto* p = static_cast<char*>(std::malloc(size));
    if (p == nullptr) return fail(state, "malloc returned NULL");
    p[0] = 1;
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// ---- small live-set churn -----------------------------------------------------------------------
void bm_churn(benchmark::State& state) {
  constexpr size_t kSlots = 1000;
  SplitMix64 rng(0x5eed);
  std::vector<char*> slots(kSlots);
  for (auto& s : slots) {
    s = static_cast<char*>(std::malloc(rng.between(16, 512)));
    if (s == nullptr) return fail(state, "malloc returned NULL");
  }
  for (auto _ : state) {
    const size_t i = rng.next() % kSlots;
    std::free(slots[i]);
    char* p = static_cast<char*>(std::malloc(rng.between(16, 512)));
    if (p == nullptr) return fail(state, "malloc returned NULL");
    p[0] = 1;
    slots[i] = p;
  }
  for (char* s : slots) std::free(s);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// ---- cross-thread free --------------------------------------------------------------------------
// The benchmark thread allocates and pushes; a consumer thread pops and frees. The ring is
// bounded, so the producer cannot run ahead: the measured rate is that of the slower side.
void bm_xthread(benchmark::State& state, size_t lo, size_t hi) {
  using Ring = hs_bench::SpscRing<1024>;
  auto ring = std::make_unique<Ring>();
  std::atomic<bool> stop{false};
  std::thread consumer([&] {
    void* p = nullptr;
    for (unsigned idle = 0;;) {
      if (ring->try_pop(&p)) {
        std::free(p);
        idle = 0;
      } else if (stop.load(std::memory_order_acquire)) {
        while (ring->try_pop(&p)) std::free(p);
        return;
      } else {
        hs_bench::backoff(idle++);
      }
    }
  });
  SplitMix64 rng(0x7e57);
  bool ok = true;
  for (auto _ : state) {
    const size_t size = lo == hi ? lo : rng.between(lo, hi);
    auto* p = static_cast<char*>(std::malloc(size));
    if (p == nullptr) {
      ok = false;
      break;
    }
    p[0] = 1;
    ring->push(p);
  }
  stop.store(true, std::memory_order_release);
  consumer.join();
  if (!ok) return fail(state, "malloc returned NULL");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// ---- realloc growth -----------------------------------------------------------------------------
void bm_realloc_growth(benchmark::State& state) {
  for (auto _ : state) {
    size_t size = 16;
    auto* p = static_cast<unsigned char*>(std::malloc(size));
    if (p == nullptr) return fail(state, "malloc returned NULL");
    p[0] = 0xA5;
    p[size - 1] = 0x5A;
    while (size < 65536) {
      const size_t old_size = size;
      size = size + size / 2;
      if (size > 65536) size = 65536;
      auto* q = static_cast<unsigned char*>(std::realloc(p, size));
      if (q == nullptr) {
        std::free(p);
        return fail(state, "realloc returned NULL");
      }
      if (q[0] != 0xA5 || q[old_size - 1] != 0x5A) {
        std::free(q);
        return fail(state, "realloc lost contents");
      }
      p = q;
      p[size - 1] = 0x5A;
    }
    std::free(p);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// ---- program-shaped rows (program_rows.cc) ------------------------------------------------------
void bm_rounds(benchmark::State& state) {
  uint64_t seed = 1;
  for (auto _ : state) {
    if (hs_bench::rounds_run(1, 2, 2000, seed++) != 0) return fail(state, "content check failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void bm_large_reuse(benchmark::State& state) {
  uint64_t seed = 1;
  for (auto _ : state) {
    if (hs_bench::large_reuse_run(1, seed++) != 0) return fail(state, "content check failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void bm_pool(benchmark::State& state) {
  hs_bench::PoolRounds pool(8, 1500, 1);
  // Untimed first rounds: the row measures a pool that has run for a while, not how fast
  // each allocator faults its first ~90 MB in (a run of this row is often a round or two).
  for (int round = 0; round < 4; ++round) {
    if (pool.run_round() != 0) return fail(state, "content check failed");
  }
  for (auto _ : state) {
    if (pool.run_round() != 0) return fail(state, "content check failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void bm_mixed_live(benchmark::State& state) {
  hs_bench::MixedLiveSet set(20000, 0x5eed);
  for (auto _ : state) {
    if (!set.replace_one()) return fail(state, "content check failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void register_rows() {
  static const struct {
    const char* name;
    size_t size;
  } kPairs[] = {{"pair/16", 16},       {"pair/64", 64},     {"pair/256", 256},
                {"pair/1KiB", 1024},   {"pair/4KiB", 4096}, {"pair/64KiB", 65536},
                {"pair/1MiB", 1 << 20}};
  for (const auto& row : kPairs) {
    const size_t size = row.size;
    benchmark::RegisterBenchmark(row.name, [size](benchmark::State& s) {
      bm_pair(s, size);
    })->UseRealTime();
  }
  benchmark::RegisterBenchmark("churn/1000x16-512", bm_churn)->UseRealTime();
  benchmark::RegisterBenchmark("xthread/64", [](benchmark::State& s) {
    bm_xthread(s, 64, 64);
  })->UseRealTime();
  benchmark::RegisterBenchmark("xthread/16-512", [](benchmark::State& s) {
    bm_xthread(s, 16, 512);
  })->UseRealTime();
  benchmark::RegisterBenchmark("realloc_growth/16-64KiB", bm_realloc_growth)->UseRealTime();
  benchmark::RegisterBenchmark("rounds/2x2000", bm_rounds)->UseRealTime();
  benchmark::RegisterBenchmark("large_reuse/4-32MiB", bm_large_reuse)->UseRealTime();
  benchmark::RegisterBenchmark("mixed_live/20000", bm_mixed_live)->UseRealTime();
  benchmark::RegisterBenchmark("pool/8x1500", bm_pool)->UseRealTime();
}

// The allocator library mapped into this process, from /proc/self/maps ("glibc" if none).
std::string mapped_allocator() {
  static const char* const kNames[] = {"libheapscope", "libmimalloc", "libjemalloc", "libtcmalloc"};
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    for (const char* name : kNames) {
      const auto at = line.find(name);
      if (at != std::string::npos) {
        const auto slash = line.rfind('/');
        return slash == std::string::npos ? line.substr(at) : line.substr(slash + 1);
      }
    }
  }
  return "glibc";
}

int run_rss_stress(bool smoke) {
  hs_bench::RssStressConfig config;
  if (smoke) {
    config.slots_per_thread = 2000;
    config.ops_per_thread = 60000;
  }
  const size_t failures = hs_bench::run_rss_stress(config);
  if (!smoke) std::printf("{\"peak_kib\": %zu}\n", hs_bench::status_kib("VmHWM:"));
  if (failures != 0) {
    std::fprintf(stderr, "hs-alloc-bench: rss stress: %zu blocks failed their content check\n",
                 failures);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool smoke = false;
  bool rss_only = false;
  const char* memory_row = nullptr;
  std::vector<char*> args;
  static char kSmokeMinTime[] = "--benchmark_min_time=0.01";
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") == 0) {
      smoke = true;
      args.push_back(kSmokeMinTime);
    } else if (std::strcmp(argv[i], "--rss-stress") == 0) {
      rss_only = true;
    } else if (std::strcmp(argv[i], "--memory-row") == 0 && i + 1 < argc) {
      memory_row = argv[++i];
    } else {
      args.push_back(argv[i]);
    }
  }

  const std::string allocator = mapped_allocator();
  if (const char* expect = std::getenv("HS_BENCH_EXPECT_LIB"); expect != nullptr && *expect != 0) {
    if (allocator.find(expect) == std::string::npos) {
      std::fprintf(stderr, "hs-alloc-bench: expected allocator '%s' but found '%s'\n", expect,
                   allocator.c_str());
      return 1;
    }
  }
  if (rss_only) return run_rss_stress(false);
  if (memory_row != nullptr) return hs_bench::run_memory_row(memory_row, smoke);

  int bench_argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&bench_argc, args.data());
  if (benchmark::ReportUnrecognizedArguments(bench_argc, args.data())) return 2;
  benchmark::AddCustomContext("malloc_library", allocator);
  register_rows();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  int status = g_failed ? 1 : 0;
  if (smoke && status == 0) status = run_rss_stress(true);
  // The memory rows once each, shortened, so a broken row fails the smoke test.
  for (const char* row : {"rounds", "large_reuse", "mixed_live", "pool", "startup"}) {
    if (smoke && status == 0) status = hs_bench::run_memory_row(row, true);
  }
  return status;
}
