// Checks from inside the program who serves its allocations, as it was linked:
//   consumer shared   malloc and new are heapscope's, and malloc binds to libheapscope.so
//   consumer static   malloc and new are heapscope's (the archive linked into the program)
//   consumer noprof   as shared, from libheapscope_noprof.so, whose profiler never starts
//   consumer api      only hs_* is heapscope's; malloc and new stay the C library's
//   consumer events   as shared, from libheapscope_events.so: memory events available, and
//                     once enabled they count this program's malloc exactly
//   consumer events-api  as api, from libheapscope_events_api.so: events count hs_malloc
// hs_is_in_heap_region answers for any pointer, so a block from another allocator reads 0.
#include <dlfcn.h>
#include <heapscope/heapscope.h>
#include <heapscope/memory_events.h>
#include <heapscope/profile.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace {

hs_stats_t stats_now() {
  hs_stats_t stats;
  std::memset(&stats, 0, sizeof stats);
  stats.size = sizeof stats;
  stats.version = HS_STATS_VERSION;
  if (hs_stats_get(&stats) != 0) {
    std::fprintf(stderr, "consumer: hs_stats_get failed\n");
    std::exit(2);
  }
  return stats;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const bool events = mode == "events" || mode == "events-api";
  if (mode != "shared" && mode != "static" && mode != "noprof" && mode != "api" && !events) {
    std::fprintf(stderr, "usage: consumer shared|static|noprof|api|events|events-api\n");
    return 2;
  }
  const bool overrides = mode != "api" && mode != "events-api";

  const hs_stats_t before = stats_now();
  void* from_malloc = std::malloc(1000);
  std::unique_ptr<long[]> from_new(new long[100]);
  void* from_hs = hs_malloc(64);
  const hs_stats_t after = stats_now();

  const int malloc_ours = hs_is_in_heap_region(from_malloc);
  const int new_ours = hs_is_in_heap_region(from_new.get());
  const int hs_ours = hs_is_in_heap_region(from_hs);
  const unsigned long long counted = after.alloc_count - before.alloc_count;

  Dl_info info;
  std::memset(&info, 0, sizeof info);
  const void* malloc_symbol = dlsym(RTLD_DEFAULT, "malloc");
  const char* malloc_object =
      malloc_symbol != nullptr && dladdr(malloc_symbol, &info) != 0 && info.dli_fname != nullptr
          ? info.dli_fname
          : "?";

  std::printf(
      "%s: heapscope %d; malloc bound to %s; heapscope blocks: malloc %d new %d hs_malloc %d;"
      " allocations counted %llu\n",
      mode.c_str(), hs_version(), malloc_object, malloc_ours, new_ours, hs_ours, counted);

  bool ok = hs_ours == 1 && malloc_ours == (overrides ? 1 : 0) && new_ours == (overrides ? 1 : 0) &&
            counted >= (overrides ? 3u : 1u);
  if (mode == "shared") ok = ok && std::strstr(malloc_object, "/libheapscope.so") != nullptr;
  if (mode == "noprof") ok = ok && std::strstr(malloc_object, "/libheapscope_noprof.so") != nullptr;
  if (mode == "events") ok = ok && std::strstr(malloc_object, "/libheapscope_events.so") != nullptr;

  // Memory events: compiled into the events libraries only; there, 3 allocations of 1000
  // bytes made while tracking are 3000 more bytes allocated, counted exactly.
  ok = ok && hs_memory_events_available() == events;
  if (events) {
    hs_memory_events_set_enabled(true);
    hs_memory_snapshot_t before_events{}, after_events{};
    before_events.size = after_events.size = sizeof(hs_memory_snapshot_t);
    before_events.version = after_events.version = HS_MEMORY_SNAPSHOT_VERSION;
    ok = ok && hs_memory_events_snapshot(&before_events);
    void* tracked[3];
    for (void*& block : tracked) block = overrides ? std::malloc(1000) : hs_malloc(1000);
    ok = ok && hs_memory_events_snapshot(&after_events);
    for (void* block : tracked) overrides ? std::free(block) : hs_free(block);
    hs_memory_events_set_enabled(false);
    ok = ok && after_events.accum_count - before_events.accum_count == 3 &&
         after_events.accum_bytes - before_events.accum_bytes >= 3000;
    std::printf(
        "%s: memory events counted %llu allocations, %llu bytes\n", mode.c_str(),
        static_cast<unsigned long long>(after_events.accum_count - before_events.accum_count),
        static_cast<unsigned long long>(after_events.accum_bytes - before_events.accum_bytes));
  }

  // The profiler's API links and runs: every allocation sampled at a 1-byte interval.
  const bool profiler_expected = mode != "noprof";
  if (!profiler_expected) {
    if (hs_prof_start_seeded(1, 1)) {
      hs_prof_stop();
      ok = false;
    }
  } else if (hs_prof_start_seeded(1, 1)) {
    void* sampled = hs_malloc(4096);
    hs_prof_stats_t prof = HS_PROF_STATS_INIT;
    ok = ok && hs_prof_stats_get(&prof) && prof.live_samples >= 1;
    hs_free(sampled);
    hs_prof_stop();
  } else {
    ok = false;
  }

  hs_free(from_hs);
  std::free(from_malloc);
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
