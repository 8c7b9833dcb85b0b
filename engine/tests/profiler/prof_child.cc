// Helper program for the profiler's child-process tests (process_test.cc). Linked with
// heapscope_api and built with frame pointers. Prints `KEY value` lines on stdout.
//
//   prof_child determinism <seed>|env   start_seeded(4096, seed) (env: hs_prof_start(4096),
//                                       the seed from HEAPSCOPE_PROF_SEED); a fixed workload;
//                                       prints the (live_samples, live_bytes) sequence, the
//                                       sorted per-stack (objects, bytes) list and the seed
//   prof_child threads <seed>           start_seeded(4096, seed); 4 threads created in order,
//                                       released together, each allocating its own fixed
//                                       workload at its own call depth; prints the per-stack
//                                       (depth, objects, bytes) list sorted by depth
//   prof_child config-exit <path> <fmt>  start_ex(OVERRIDE: dump_at_exit=path, dump_format=fmt)
//                                       at interval 4096, leaks some blocks, exits normally
//   prof_child report                   for HEAPSCOPE_PROF=1 runs: allocates through a deep
//                                       call chain, frees some, leaks some, prints the stats
//                                       and the deepest stack seen by a visit; exits normally
//                                       (so HEAPSCOPE_PROF_DUMP_AT_EXIT writes its profile)
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "behaviour_support.h"

namespace {

using hs_prof_test::prof_stats;
using hs_prof_test::VisitSums;

uint64_t g_rng = 7;
uint64_t next_random() {
  uint64_t z = (g_rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__attribute__((noinline, noclone)) void* alloc_at_depth(int depth, size_t size) {
  if (depth <= 0) {
    void* p = hs_malloc(size);
    asm volatile("" : "+r"(p)::"memory");
    return p;
  }
  void* p = alloc_at_depth(depth - 1, size);
  asm volatile("" : "+r"(p)::"memory");
  return p;
}

int determinism(const char* seed_arg) {
  bool ok = std::strcmp(seed_arg, "env") == 0
                ? hs_prof_start(4096)
                : hs_prof_start_seeded(4096, std::strtoull(seed_arg, nullptr, 10));
  if (!ok) return 2;
  std::vector<void*> blocks;
  for (int i = 0; i < 3000; ++i) {
    size_t size = 16 + next_random() % 6000;
    void* p = alloc_at_depth(static_cast<int>(next_random() % 8), size);
    if (p == nullptr) return 3;
    blocks.push_back(p);
    if (i % 3 == 2) {
      size_t victim = next_random() % blocks.size();
      hs_free(blocks[victim]);
      blocks[victim] = blocks.back();
      blocks.pop_back();
    }
    if (i % 100 == 99) {
      hs_prof_stats_t s = prof_stats();
      std::printf("STEP %" PRIu64 " %" PRIu64 "\n", s.live_samples, s.live_bytes);
    }
  }
  VisitSums c;
  if (!hs_prof_visit(VisitSums::add, &c)) return 4;
  c.sort();
  for (auto [objects, bytes] : c.per_stack) {
    std::printf("STACK %" PRIu64 " %" PRIu64 "\n", objects, bytes);
  }
  hs_prof_stats_t s = prof_stats();
  std::printf("TOTAL %" PRIu64 "\nSEED %" PRIu64 "\n", s.total_samples, s.seed);
  for (void* p : blocks) hs_free(p);
  hs_prof_stop();
  return 0;
}

struct DepthStack {
  size_t depth;
  uint64_t objects, bytes;
  bool operator<(const DepthStack& o) const {
    return depth != o.depth       ? depth < o.depth
           : objects != o.objects ? objects < o.objects
                                  : bytes < o.bytes;
  }
};

bool collect_depth(const hs_prof_sample_info_t* info, void* arg) {
  static_cast<std::vector<DepthStack>*>(arg)->push_back(
      DepthStack{info->depth, info->live_objects, info->live_bytes});
  return true;
}

int threads(const char* seed_arg) {
  if (!hs_prof_start_seeded(4096, std::strtoull(seed_arg, nullptr, 10))) return 2;
  constexpr int kThreads = 4;
  std::atomic<bool> go{false};
  std::vector<std::vector<void*>> kept(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([t, &go, &kept] {
      while (!go.load(std::memory_order_acquire)) {
      }
      uint64_t rng = 1000 + static_cast<uint64_t>(t);
      for (int i = 0; i < 2000; ++i) {
        uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        kept[static_cast<size_t>(t)].push_back(alloc_at_depth(2 * t + 1, 16 + z % 4000));
      }
    });
  }
  go.store(true, std::memory_order_release);
  for (std::thread& th : pool) th.join();
  std::vector<DepthStack> stacks;
  if (!hs_prof_visit(collect_depth, &stacks)) return 4;
  std::sort(stacks.begin(), stacks.end());
  for (const DepthStack& d : stacks) {
    std::printf("TSTACK %zu %" PRIu64 " %" PRIu64 "\n", d.depth, d.objects, d.bytes);
  }
  for (auto& blocks : kept) {
    for (void* p : blocks) hs_free(p);
  }
  return 0;
}

int config_exit(const char* path, const char* format) {
  hs_prof_config_t c;
  std::memset(&c, 0, sizeof c);
  c.size = sizeof c;
  c.version = HS_PROF_CONFIG_VERSION;
  c.mode = HS_PROF_OVERRIDE;
  c.fields = HS_PROF_FIELD_SAMPLE_INTERVAL | HS_PROF_FIELD_DUMP_AT_EXIT | HS_PROF_FIELD_DUMP_FORMAT;
  c.sample_interval = 4096;
  c.dump_at_exit = path;
  c.dump_format = static_cast<uint32_t>(std::atoi(format));
  if (!hs_prof_start_ex(&c)) return 2;
  for (int i = 0; i < 100; ++i) {
    if (alloc_at_depth(2, 8192) == nullptr) return 3;  // leaked on purpose
  }
  std::printf("LIVE %" PRIu64 "\n", prof_stats().live_samples);
  return 0;
}

int report() {
  // The first allocation initializes the engine (and starts the profiler under HEAPSCOPE_PROF).
  std::vector<void*> blocks;
  for (int i = 0; i < 400; ++i) {
    void* p = alloc_at_depth(6, 4096 + static_cast<size_t>(i % 16) * 64);
    if (p == nullptr) return 3;
    blocks.push_back(p);
  }
  for (size_t i = 0; i < blocks.size(); i += 2) hs_free(blocks[i]);  // half freed, half leaked
  hs_prof_stats_t s = prof_stats();
  VisitSums c;
  if (hs_prof_is_enabled() && !hs_prof_visit(VisitSums::add, &c)) return 4;
  std::printf("ENABLED %d\nINTERVAL %" PRIu64 "\nDEPTH %u\nACCUM %d\nACCUM_SAMPLES %" PRIu64
              "\nLIVE %" PRIu64 "\nTOTAL %" PRIu64 "\nSEED %" PRIu64 "\nMAXBYTES %" PRIu64
              "\nMAXDEPTH %zu\nMINDEPTH %zu\n",
              s.enabled, s.sample_interval, static_cast<unsigned>(s.max_stack_depth), s.accum,
              s.accum_samples, s.live_samples, s.total_samples, s.seed, s.max_bytes, c.max_depth,
              c.min_depth == SIZE_MAX ? 0 : c.min_depth);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  alarm(60);  // never hang a test
  if (argc >= 3 && std::strcmp(argv[1], "determinism") == 0) return determinism(argv[2]);
  if (argc >= 2 && std::strcmp(argv[1], "report") == 0) return report();
  if (argc >= 3 && std::strcmp(argv[1], "threads") == 0) return threads(argv[2]);
  if (argc >= 4 && std::strcmp(argv[1], "config-exit") == 0) return config_exit(argv[2], argv[3]);
  std::fprintf(stderr, "usage: prof_child determinism <seed>|env | report\n");
  return 64;
}
