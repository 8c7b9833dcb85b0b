// The profiler's API contract, pluggable profilers: hs_profiler_t on a heap and process-wide,
// interval precedence beside the built-in session, and the pprof profiler object's snapshots.
#include "contract_support.h"

namespace {

using namespace hs_prof_contract;

constexpr uint64_t kMagic = 0x5EEDF00DCAFEULL;

struct PlugCounters {
  std::atomic<int> alloc{0}, free{0}, realloc{0}, snapshot{0}, bad_data{0}, wrong_heap{0};
  std::atomic<size_t> last_old{0}, last_new{0};
  hs_heap_t* expected_heap = nullptr;
  void reset() {
    alloc = free = realloc = snapshot = bad_data = wrong_heap = 0;
    last_old = last_new = 0;
    expected_heap = nullptr;
  }
};
PlugCounters g_plug;

size_t plug_on_alloc(hs_profiler_t*, hs_profiler_sample_data_t* data, void* ptr, size_t size,
                     size_t, uint64_t, hs_heap_t* heap) {
  g_plug.alloc++;
  if (g_plug.expected_heap != nullptr && heap != g_plug.expected_heap) g_plug.wrong_heap++;
  if (data == nullptr || data->user_data_size != 16) {
    g_plug.bad_data++;
    return 0;
  }
  uint64_t value[2] = {reinterpret_cast<uintptr_t>(ptr) ^ kMagic, size};
  std::memcpy(data->user_data, value, sizeof value);
  return 0;
}

void plug_on_free(hs_profiler_t*, hs_profiler_sample_data_t* data, void* ptr, hs_heap_t*) {
  g_plug.free++;
  uint64_t value[2] = {0, 0};
  if (data == nullptr || data->user_data_size != 16) {
    g_plug.bad_data++;
    return;
  }
  std::memcpy(value, data->user_data, sizeof value);
  if (value[0] != (reinterpret_cast<uintptr_t>(ptr) ^ kMagic)) g_plug.bad_data++;
}

size_t plug_on_realloc(hs_profiler_t*, hs_profiler_sample_data_t* data, void* ptr, size_t old_size,
                       size_t new_size, hs_heap_t*) {
  g_plug.realloc++;
  g_plug.last_old = old_size;
  g_plug.last_new = new_size;
  uint64_t value[2] = {0, 0};
  if (data == nullptr) {
    g_plug.bad_data++;
    return 0;
  }
  std::memcpy(value, data->user_data, sizeof value);
  if (value[0] != (reinterpret_cast<uintptr_t>(ptr) ^ kMagic)) g_plug.bad_data++;
  return 0;
}

void plug_on_snapshot(hs_profiler_t*) { g_plug.snapshot++; }

hs_profiler_t make_profiler() {
  hs_profiler_t p{};
  p.reserved = nullptr;
  p.sample_data_size = 16;
  p.initial_sample_interval = 1;  // every allocation
  p.on_alloc = plug_on_alloc;
  p.on_free = plug_on_free;
  p.on_realloc_inplace = plug_on_realloc;
  p.on_snapshot = plug_on_snapshot;
  return p;
}

// Profiler objects must outlive every heap that may point at them: static storage.
hs_profiler_t g_heap_profiler = make_profiler();
hs_profiler_t g_process_profiler = make_profiler();

TEST_F(ProfContract, PluggableProfilerOnAHeapSeesEveryAllocationAndFreeWithItsUserData) {
  g_plug.reset();
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  g_plug.expected_heap = heap;
  ASSERT_TRUE(hs_heap_profile(heap, &g_heap_profiler));
  ASSERT_TRUE(hs_profiler_start(&g_heap_profiler));
  EXPECT_FALSE(hs_prof_is_enabled()) << "a user profiler is not the built-in session";
  constexpr int kCount = 200;
  std::vector<void*> blocks;
  for (int i = 0; i < kCount; ++i) {
    void* p = hs_heap_malloc(heap, 64 + static_cast<size_t>(i));
    ASSERT_NE(p, nullptr);
    blocks.push_back(p);
  }
  EXPECT_EQ(g_plug.alloc.load(), kCount);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  EXPECT_EQ(g_plug.wrong_heap.load(), 0);
  // The default heap is not attached.
  for (int i = 0; i < 50; ++i) hs_free(hs_malloc(128));
  EXPECT_EQ(g_plug.alloc.load(), kCount);
  EXPECT_EQ(g_plug.free.load(), 0);
  EXPECT_EQ(prof_stats().live_samples, 0u) << "user samples are not built-in samples";
  // In place: on_realloc_inplace with the old and new sizes (the block of 64+199 shrinks).
  void* q = hs_heap_realloc(heap, blocks.back(), 200);
  ASSERT_EQ(q, blocks.back());
  EXPECT_EQ(g_plug.realloc.load(), 1);
  EXPECT_EQ(g_plug.last_old.load(), 64u + kCount - 1);
  EXPECT_EQ(g_plug.last_new.load(), 200u);
  EXPECT_EQ(g_plug.alloc.load(), kCount);
  // Half freed: one on_free each (also from another thread).
  for (int i = 0; i < kCount / 4; ++i) hs_free(blocks[static_cast<size_t>(i)]);
  std::thread remote([&] {
    for (int i = kCount / 4; i < kCount / 2; ++i) hs_free(blocks[static_cast<size_t>(i)]);
  });
  remote.join();
  EXPECT_EQ(g_plug.free.load(), kCount / 2);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  hs_profiler_snapshot(&g_heap_profiler);
  EXPECT_EQ(g_plug.snapshot.load(), 1);
  // Stop: on_free for every remaining sample, then never again for those blocks.
  ASSERT_TRUE(hs_profiler_stop(&g_heap_profiler));
  EXPECT_EQ(g_plug.free.load(), kCount);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  EXPECT_FALSE(hs_profiler_stop(&g_heap_profiler)) << "already stopped";
  for (int i = kCount / 2; i < kCount; ++i) hs_free(blocks[static_cast<size_t>(i)]);
  EXPECT_EQ(g_plug.free.load(), kCount);
  for (int i = 0; i < 20; ++i) hs_free(hs_heap_malloc(heap, 100));
  EXPECT_EQ(g_plug.alloc.load(), kCount) << "no samples after stop";

  // Restarted: hs_heap_destroy reports the heap's samples through on_free.
  ASSERT_TRUE(hs_profiler_start(&g_heap_profiler));
  EXPECT_FALSE(hs_profiler_start(&g_heap_profiler)) << "already started";
  // More than one pass of the destroy scan (it hands user samples back 64 at a time).
  constexpr int kDestroyed = 150;
  for (int i = 0; i < kDestroyed; ++i) ASSERT_NE(hs_heap_malloc(heap, 300), nullptr);
  EXPECT_EQ(g_plug.alloc.load(), kCount + kDestroyed);
  hs_heap_destroy(heap);
  EXPECT_EQ(g_plug.free.load(), kCount + kDestroyed);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  ASSERT_TRUE(hs_profiler_stop(&g_heap_profiler));
  EXPECT_EQ(g_plug.free.load(), kCount + kDestroyed);
}

TEST_F(ProfContract, ProcessWideProfilerAndProfileDisabledHeap) {
  g_plug.reset();
  ASSERT_TRUE(hs_profile(&g_process_profiler));
  ASSERT_TRUE(hs_profiler_start(&g_process_profiler));
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) blocks.push_back(hs_malloc(200));
  EXPECT_EQ(g_plug.alloc.load(), 100);
  hs_heap_t* quiet = hs_heap_new();
  hs_heap_profile_disable(quiet);
  for (int i = 0; i < 50; ++i) ASSERT_NE(hs_heap_malloc(quiet, 200), nullptr);
  EXPECT_EQ(g_plug.alloc.load(), 100) << "a profile-disabled heap is never sampled";
  hs_heap_t* loud = hs_heap_new();
  for (int i = 0; i < 10; ++i) ASSERT_NE(hs_heap_malloc(loud, 200), nullptr);
  EXPECT_EQ(g_plug.alloc.load(), 110) << "other heaps get the process-wide profiler";
  hs_heap_destroy(loud);
  EXPECT_EQ(g_plug.free.load(), 10);
  hs_heap_destroy(quiet);
  EXPECT_EQ(g_plug.free.load(), 10);
  for (void* p : blocks) hs_free(p);
  EXPECT_EQ(g_plug.free.load(), 110);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  ASSERT_TRUE(hs_profiler_stop(&g_process_profiler));
  ASSERT_TRUE(hs_profile(nullptr));
  for (int i = 0; i < 10; ++i) hs_free(hs_malloc(200));
  EXPECT_EQ(g_plug.alloc.load(), 110);
}

// on_alloc's return value is the next mean interval; a heap's own profiler wins over the
// process-wide one; the built-in session samples the other heaps at the same time; a profiler
// without on_free gets no user data and tracks nothing.
std::atomic<int> g_slow_allocs{0};
size_t slow_down_on_alloc(hs_profiler_t*, hs_profiler_sample_data_t*, void*, size_t, size_t,
                          uint64_t, hs_heap_t*) {
  g_slow_allocs++;
  return size_t{1} << 40;  // from now on, (almost) never
}
std::atomic<int> g_untracked_allocs{0}, g_untracked_with_data{0};
size_t untracked_on_alloc(hs_profiler_t*, hs_profiler_sample_data_t* data, void*, size_t, size_t,
                          uint64_t, hs_heap_t*) {
  g_untracked_allocs++;
  if (data != nullptr) g_untracked_with_data++;
  return 0;
}
hs_profiler_t g_slow_profiler = [] {
  hs_profiler_t p = make_profiler();
  p.on_alloc = slow_down_on_alloc;
  p.on_free = nullptr;
  return p;
}();
hs_profiler_t g_untracked_profiler = [] {
  hs_profiler_t p = make_profiler();
  p.on_alloc = untracked_on_alloc;
  p.on_free = nullptr;
  return p;
}();

TEST_F(ProfContract, PluggableIntervalFromOnAllocPrecedenceAndBuiltInSideBySide) {
  g_plug.reset();
  hs_heap_t* slow = hs_heap_new();
  ASSERT_TRUE(hs_heap_profile(slow, &g_slow_profiler));
  ASSERT_TRUE(hs_profiler_start(&g_slow_profiler));
  for (int i = 0; i < 1000; ++i) hs_free(hs_heap_malloc(slow, 256));
  EXPECT_EQ(g_slow_allocs.load(), 1) << "the interval returned by on_alloc takes effect";
  ASSERT_TRUE(hs_profiler_stop(&g_slow_profiler));

  // Built-in session at interval 1 plus a heap-attached user profiler and a process-wide one.
  ASSERT_TRUE(hs_prof_start_seeded(1, 51));
  hs_heap_t* own = hs_heap_new();
  ASSERT_TRUE(hs_heap_profile(own, &g_heap_profiler));
  ASSERT_TRUE(hs_profiler_start(&g_heap_profiler));
  std::vector<void*> blocks;
  for (int i = 0; i < 20; ++i) blocks.push_back(hs_heap_malloc(own, 128));
  for (int i = 0; i < 30; ++i) blocks.push_back(hs_malloc(128));
  EXPECT_EQ(g_plug.alloc.load(), 20);
  EXPECT_EQ(prof_stats().live_samples, 30u) << "the default heap still feeds the built-in one";
  ASSERT_TRUE(hs_profile(&g_untracked_profiler));
  ASSERT_TRUE(hs_profiler_start(&g_untracked_profiler));
  for (int i = 0; i < 10; ++i) blocks.push_back(hs_heap_malloc(own, 128));
  for (int i = 0; i < 15; ++i) blocks.push_back(hs_malloc(128));
  EXPECT_EQ(g_plug.alloc.load(), 30) << "the heap's own profiler wins over the process-wide one";
  EXPECT_EQ(g_untracked_allocs.load(), 15);
  EXPECT_EQ(g_untracked_with_data.load(), 0) << "no user data without on_free";
  EXPECT_EQ(prof_stats().live_samples, 30u);
  for (void* p : blocks) hs_free(p);
  EXPECT_EQ(g_plug.free.load(), 30);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  EXPECT_EQ(prof_stats().live_samples, 0u);
  ASSERT_TRUE(hs_profiler_stop(&g_untracked_profiler));
  ASSERT_TRUE(hs_profile(nullptr));
  ASSERT_TRUE(hs_profiler_stop(&g_heap_profiler));
  ASSERT_TRUE(hs_heap_profile(own, nullptr));
  hs_heap_delete(own);
  hs_heap_delete(slow);
}

TEST_F(ProfContract, PprofProfilerInuseGrowthTriggerAndBusySession) {
  hs_prof_test::TempDir dir;
  const std::string base = dir.file("inuse");
  hs_profiler_t* pprof = hs_pprof_profiler_new(4096, base.c_str(), 0, 1 << 20, 0);
  ASSERT_NE(pprof, nullptr);
  ASSERT_TRUE(hs_prof_start(4096));
  EXPECT_FALSE(hs_profiler_start(pprof)) << "the built-in session is already running";
  hs_prof_stop();
  ASSERT_TRUE(hs_profiler_start(pprof));
  std::vector<void*> blocks;
  for (int i = 0; i < 64; ++i) {  // 64 x 4 KiB = 256 KiB: below the in-use trigger
    blocks.push_back(hs_malloc(4096));
    hs_free(blocks.back());
    blocks.pop_back();
  }
  EXPECT_FALSE(hs_prof_test::file_exists(base + ".0001.pb.gz"));
  for (int i = 0; i < 512; ++i) blocks.push_back(hs_malloc(4096));  // 2 MiB live
  EXPECT_TRUE(hs_prof_test::file_exists(base + ".0001.pb.gz"));
  for (void* p : blocks) hs_free(p);
  ASSERT_TRUE(hs_profiler_stop(pprof));
  hs_pprof_profiler_delete(pprof);
  EXPECT_EQ(hs_pprof_profiler_new(4096, nullptr, 0, 0, 0), nullptr);
  EXPECT_EQ(hs_pprof_profiler_new(4096, ".heap", 0, 0, 0), nullptr) << "empty base name";
}

// Regression (crash, fixed in efb6301): a user profiler's sample data and records live in the same
// profiler memory as the built-in session's. hs_prof_stop hands all of it back to the OS (api.cc:
// g_memory.release_everything()) when no record and no stack is left, but user_sample
// (pluggable.cc) allocates the sample data under the lock, drops the lock to call on_alloc,
// and only then inserts the record: a built-in session stopped on another thread in that
// window unmaps the data on_alloc is writing (SIGSEGV), or leaves the record pointing at it.
// Run in a forked child so the crash fails this test only.
std::atomic<int> g_race_allocs{0}, g_race_bad{0};
size_t racing_on_alloc(hs_profiler_t*, hs_profiler_sample_data_t* data, void* ptr, size_t, size_t,
                       uint64_t, hs_heap_t*) {
  g_race_allocs++;
  if (data == nullptr || data->user_data_size != 16) {
    g_race_bad++;
    return 0;
  }
  for (int i = 0; i < 200; ++i) asm volatile("" ::: "memory");  // widen the window
  uint64_t value[2] = {reinterpret_cast<uintptr_t>(ptr) ^ kMagic, 0};
  std::memcpy(data->user_data, value, sizeof value);
  return 0;
}
void racing_on_free(hs_profiler_t*, hs_profiler_sample_data_t* data, void* ptr, hs_heap_t*) {
  uint64_t value[2] = {0, 0};
  if (data == nullptr) {
    g_race_bad++;
    return;
  }
  std::memcpy(value, data->user_data, sizeof value);
  if (value[0] != (reinterpret_cast<uintptr_t>(ptr) ^ kMagic)) g_race_bad++;
}
hs_profiler_t g_racing_profiler = [] {
  hs_profiler_t p = make_profiler();
  p.on_alloc = racing_on_alloc;
  p.on_free = racing_on_free;
  return p;
}();

// The race itself; returns 0 when every sample kept its data.
int race_user_samples_with_builtin_stops() {
  std::atomic<bool> ready{false}, done{false};
  std::thread sampler([&] {
    hs_heap_t* heap = hs_heap_new();
    if (!hs_heap_profile(heap, &g_racing_profiler) || !hs_profiler_start(&g_racing_profiler)) {
      g_race_bad++;
    }
    ready = true;
    const int rounds = hs_test::kSanitized ? 20000 : 200000;
    for (int i = 0; i < rounds; ++i) hs_free(hs_heap_malloc(heap, 64));
    done = true;
    (void)hs_profiler_stop(&g_racing_profiler);
    (void)hs_heap_profile(heap, nullptr);
    hs_heap_delete(heap);
  });
  while (!ready.load()) std::this_thread::yield();
  int sessions = 0;
  while (!done.load()) {
    if (!hs_prof_start_seeded(1 << 20, 1)) return 3;
    hs_prof_stop();
    ++sessions;
  }
  sampler.join();
  if (g_race_allocs.load() == 0 || sessions == 0) return 4;
  return g_race_bad.load() == 0 ? 0 : 5;
}

TEST_F(ProfContract, BuiltInStopKeepsInFlightUserSampleData) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(60);
    _exit(race_user_samples_with_builtin_stops());
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_FALSE(WIFSIGNALED(status)) << "the racing child died of signal " << WTERMSIG(status)
                                    << (WTERMSIG(status) == SIGSEGV ? " (SIGSEGV)" : "");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: start failed, 4: nothing ran, 5: user data lost";
}

TEST_F(ProfContract, PprofProfilerWritesNumberedSnapshotsByAllocatedBytes) {
  hs_prof_test::TempDir dir;
  const std::string base = dir.file("snap");
  hs_profiler_t* pprof = hs_pprof_profiler_new(4096, base.c_str(), 1 << 20, 0, 0);
  ASSERT_NE(pprof, nullptr);
  ASSERT_TRUE(hs_profiler_start(pprof));
  EXPECT_TRUE(hs_prof_is_enabled());
  EXPECT_EQ(prof_stats().sample_interval, 4096u);
  std::vector<void*> blocks;
  for (int i = 0; i < 768; ++i) blocks.push_back(hs_malloc(4096));  // 3 MiB
  const std::string first = base + ".0001.pb.gz";
  ASSERT_TRUE(hs_prof_test::file_exists(first));
  std::string data = hs_prof_test::read_file(first);
  ASSERT_GE(data.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(data[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(data[1]), 0x8b);
  EXPECT_TRUE(hs_prof_test::file_exists(base + ".0002.pb.gz")) << "3 MiB: more than one snapshot";
  for (void* p : blocks) hs_free(p);
  ASSERT_TRUE(hs_profiler_stop(pprof));
  EXPECT_FALSE(hs_prof_is_enabled());
  hs_pprof_profiler_delete(pprof);
}

TEST_F(ProfContract, PprofProfilerHeapBaseNameWritesTextSnapshots) {
  hs_prof_test::TempDir dir;
  const std::string base = dir.file("snap");
  hs_profiler_t* pprof = hs_pprof_profiler_new(4096, (base + ".heap").c_str(), 0, 0, 0);
  ASSERT_NE(pprof, nullptr);
  ASSERT_TRUE(hs_profiler_start(pprof));
  std::vector<void*> blocks;
  for (int i = 0; i < 256; ++i) blocks.push_back(hs_malloc(4096));
  EXPECT_FALSE(hs_prof_test::file_exists(base + ".0001.heap")) << "no automatic trigger set";
  hs_profiler_snapshot(pprof);
  ASSERT_TRUE(hs_prof_test::file_exists(base + ".0001.heap"));
  std::string text = hs_prof_test::read_file(base + ".0001.heap");
  EXPECT_EQ(text.rfind("heap profile:", 0), 0u);
  EXPECT_NE(hs_prof_test::first_line(text).find("@ heap_v2/4096"), std::string::npos);
  EXPECT_GE(hs_prof_test::text_sample_lines(text), 1u);
  hs_profiler_snapshot(pprof);
  EXPECT_TRUE(hs_prof_test::file_exists(base + ".0002.heap"));
  for (void* p : blocks) hs_free(p);
  ASSERT_TRUE(hs_profiler_stop(pprof));
  hs_pprof_profiler_delete(pprof);
}

}  // namespace
