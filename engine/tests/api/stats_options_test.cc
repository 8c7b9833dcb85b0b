// hs_stats_get / hs_heap_stats_get / hs_stats_print, the options table and its HEAPSCOPE_*
// environment variables, hs_collect and hs_version.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

// On Windows the engine's descriptors are handles (engine/docs/platforms.md): the statistics go
// through a Win32 pipe, and the environment test's child runs as a CTest entry of its own
// (tests/windows.cmake) instead of a posix_spawn'ed copy of this program.
#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../support/test_support.h"

#if !defined(_WIN32)
extern char** environ;
#endif

namespace {

using hs_test::kKiB;
using hs_test::kMiB;
using hs_test::stats_now;

TEST(Stats, VersionAndSizeTagging) {
  hs_stats_t s;
  std::memset(&s, 0, sizeof(s));
  s.size = sizeof(s);
  s.version = HS_STATS_VERSION;
  ASSERT_EQ(hs_stats_get(&s), 0);
  EXPECT_EQ(s.size, sizeof(hs_stats_t));
  EXPECT_EQ(s.version, static_cast<uint32_t>(HS_STATS_VERSION));
}

TEST(Stats, OlderSmallerStructGetsOnlyItsFields) {
  void* p = hs_malloc(100);  // something to count
  ASSERT_NE(p, nullptr);
  // An older caller whose struct ends after free_count: nothing past that may be written.
  for (size_t size :
       {offsetof(hs_stats_t, requested_bytes), offsetof(hs_stats_t, pages),
        offsetof(hs_stats_t, abandoned_segments), offsetof(hs_stats_t, huge_remaps),
        offsetof(hs_stats_t, pages_taken_over), offsetof(hs_stats_t, pages_given_back)}) {
    SCOPED_TRACE(testing::Message() << "struct size " << size);
    alignas(hs_stats_t) unsigned char buf[sizeof(hs_stats_t) + 64];
    std::memset(buf, 0xA7, sizeof(buf));
    hs_stats_t header;
    header.size = size;
    header.version = HS_STATS_VERSION;
    header.reserved0 = 0;
    std::memcpy(buf, &header, offsetof(hs_stats_t, alloc_count));
    ASSERT_EQ(hs_stats_get(reinterpret_cast<hs_stats_t*>(buf)), 0);
    for (size_t i = size; i < sizeof(buf); ++i) {
      ASSERT_EQ(buf[i], 0xA7) << "byte " << i << " past the caller's struct was written";
    }
    uint64_t alloc_count = 0;
    std::memcpy(&alloc_count, buf + offsetof(hs_stats_t, alloc_count), sizeof(alloc_count));
    EXPECT_GE(alloc_count, 1u) << "the fields the caller has are filled in";
    EXPECT_NE(alloc_count, 0xA7A7A7A7A7A7A7A7u);
  }
  hs_free(p);
}

TEST(Stats, TooSmallStructIsRejected) {
  for (size_t size : {size_t{0}, size_t{4}, sizeof(size_t)}) {
    alignas(hs_stats_t) unsigned char buf[sizeof(hs_stats_t)];
    std::memset(buf, 0xA7, sizeof(buf));
    std::memcpy(buf, &size, sizeof(size));
    const uint32_t version = HS_STATS_VERSION;
    std::memcpy(buf + offsetof(hs_stats_t, version), &version, sizeof(version));
    EXPECT_EQ(hs_stats_get(reinterpret_cast<hs_stats_t*>(buf)), -1) << "size " << size;
    for (size_t i = offsetof(hs_stats_t, alloc_count); i < sizeof(buf); ++i) {
      ASSERT_EQ(buf[i], 0xA7) << "byte " << i << " written for rejected size " << size;
    }
  }
}

TEST(Stats, CountersMoveByExactAmounts) {
  const hs_stats_t a = stats_now();
  void* p1 = hs_malloc(100);
  void* p2 = hs_zalloc(1000);
  void* p3 = hs_calloc(10, 30);
  void* p4 = hs_malloc_aligned(50, 256);
  void* p5 = hs_malloc(100 * kKiB);
  ASSERT_TRUE(p1 && p2 && p3 && p4 && p5);
  const size_t usable = hs_usable_size(p1) + hs_usable_size(p2) + hs_usable_size(p3) +
                        hs_usable_size(p4) + hs_usable_size(p5);
  const hs_stats_t b = stats_now();
  EXPECT_EQ(b.alloc_count - a.alloc_count, 5u);
  EXPECT_EQ(b.free_count - a.free_count, 0u);
  EXPECT_EQ(b.requested_bytes - a.requested_bytes, 100u + 1000u + 300u + 50u + 100 * kKiB);
  EXPECT_EQ(b.allocated_bytes - a.allocated_bytes, usable);
  EXPECT_GE(b.committed_peak, b.committed_bytes);
  EXPECT_GE(b.committed_bytes, b.allocated_bytes);
  EXPECT_GE(b.reserved_bytes, b.committed_bytes);
  EXPECT_GE(b.pages, 1u);
  EXPECT_GE(b.segments, 1u);
  EXPECT_GE(b.heaps, 1u);
  EXPECT_GE(b.threads, 1u);
  hs_free(p1);
  hs_free(p2);
  hs_free(nullptr);  // not counted
  hs_free(p3);
  hs_free(p4);
  hs_free(p5);
  const hs_stats_t c = stats_now();
  EXPECT_EQ(c.alloc_count - b.alloc_count, 0u);
  EXPECT_EQ(c.free_count - b.free_count, 5u);
  EXPECT_EQ(c.requested_bytes, b.requested_bytes) << "cumulative: frees do not subtract";
  EXPECT_EQ(c.allocated_bytes, a.allocated_bytes);
}

// Small and medium blocks are counted on their pages and folded into the heap's counts
// (src/core/page_counts.h). Every way a block can go back is counted once: the owner's fast
// path, a remote free collected later, a free into a full page, a free into the page of a
// thread that has exited. Exact once the owner has exited (its pages were folded then).
TEST(Stats, EveryKindOfFreeIsCountedOnce) {
  constexpr size_t kBlocks = 3000;
  const hs_stats_t start = stats_now();
  std::vector<void*> handed;
  std::vector<void*> kept_by_main;
  size_t kept_usable = 0;
  std::thread producer([&] {
    std::vector<void*> blocks;
    for (size_t i = 0; i < kBlocks; ++i) blocks.push_back(hs_malloc(8 + (i * 37) % 2040));
    for (size_t i = 0; i < kBlocks; ++i) {
      if (i % 3 == 0) {
        hs_free(blocks[i]);  // the owner's own free
      } else {
        handed.push_back(blocks[i]);
      }
    }
    // Half of the rest freed by another thread while this one lives (remote frees, some into
    // full pages), then collected by this thread's next allocations.
    std::thread freer([&] {
      for (size_t i = 0; i < handed.size(); i += 2) hs_free(handed[i]);
    });
    freer.join();
    std::vector<void*> more;
    for (size_t i = 0; i < 500; ++i) more.push_back(hs_malloc(8 + (i * 53) % 2040));
    for (void* p : more) hs_free(p);
    for (size_t i = 1; i < handed.size(); i += 2) kept_by_main.push_back(handed[i]);
  });
  producer.join();
  for (void* p : kept_by_main) kept_usable += hs_usable_size(p);
  const hs_stats_t after_exit = stats_now();
  const size_t freed_so_far = kBlocks - kept_by_main.size() + 500;
  EXPECT_EQ(after_exit.alloc_count - start.alloc_count, kBlocks + 500);
  EXPECT_EQ(after_exit.free_count - start.free_count, freed_so_far);
  EXPECT_EQ(after_exit.allocated_bytes - start.allocated_bytes, kept_usable);
  for (void* p : kept_by_main) hs_free(p);  // into an exited thread's pages
  const hs_stats_t end = stats_now();
  EXPECT_EQ(end.free_count - start.free_count, kBlocks + 500);
  EXPECT_EQ(end.allocated_bytes, start.allocated_bytes);
}

// A thread's own counts are exact when it reads them: a malloc/free loop on one page (which
// never leaves the fast paths) and blocks left live across pages that never filled.
TEST(Stats, AThreadReadsItsOwnCountsExactly) {
  std::thread worker([] {
    void* first = hs_malloc(40);  // the thread's heap exists before the baseline
    hs_free(first);
    const hs_stats_t a = stats_now();
    for (int i = 0; i < 100000; ++i) hs_free(hs_malloc(40));
    std::vector<void*> live;
    size_t usable = 0;
    for (size_t size = 16; size <= 48 * kKiB; size += size / 4) {
      live.push_back(hs_malloc(size));
      usable += hs_usable_size(live.back());
    }
    const hs_stats_t b = stats_now();
    EXPECT_EQ(b.alloc_count - a.alloc_count, 100000 + live.size());
    EXPECT_EQ(b.free_count - a.free_count, 100000u);
    EXPECT_EQ(b.allocated_bytes - a.allocated_bytes, usable);
    for (void* p : live) hs_free(p);
    const hs_stats_t c = stats_now();
    EXPECT_EQ(c.free_count - a.free_count, 100000 + live.size());
    EXPECT_EQ(c.allocated_bytes, a.allocated_bytes);
  });
  worker.join();
}

// Another live thread's blocks are counted as its pages fold (heapscope.h): once it has read
// its own statistics, which folds all its pages, every other thread sees its counts exactly.
TEST(Stats, ALiveThreadsCountsReachOthersWhenItFolds) {
  std::atomic<int> step{0};
  std::vector<void*> live;
  size_t usable = 0;
  const hs_stats_t start = stats_now();
  std::thread worker([&] {
    for (size_t i = 0; i < 3000; ++i) {
      void* p = hs_malloc(16 + (i * 24) % 1000);
      if (i % 3 == 0) {
        hs_free(p);
      } else {
        live.push_back(p);
        usable += hs_usable_size(p);
      }
    }
    stats_now();  // the worker's own read folds its pages
    step.store(1);
    while (step.load() != 2) std::this_thread::yield();  // alive, and idle, while main reads
    for (void* p : live) hs_free(p);
  });
  while (step.load() != 1) std::this_thread::yield();
  const hs_stats_t seen = stats_now();
  EXPECT_EQ(seen.alloc_count - start.alloc_count, 3000u);
  EXPECT_EQ(seen.free_count - start.free_count, 1000u);
  EXPECT_EQ(seen.allocated_bytes - start.allocated_bytes, usable);
  step.store(2);
  worker.join();
  EXPECT_EQ(stats_now().allocated_bytes, start.allocated_bytes);
}

TEST(Stats, HugeAllocationsAreCounted) {
  const hs_stats_t a = stats_now();
  void* h = hs_malloc(64 * kMiB);
  ASSERT_NE(h, nullptr);
  const hs_stats_t b = stats_now();
  EXPECT_EQ(b.huge_count, a.huge_count + 1);
  EXPECT_GE(b.allocated_bytes - a.allocated_bytes, 64 * kMiB);
  EXPECT_GE(b.reserved_bytes - a.reserved_bytes, 64 * kMiB);
  hs_free(h);
  const hs_stats_t c = stats_now();
  EXPECT_EQ(c.huge_count, a.huge_count);
  EXPECT_EQ(c.allocated_bytes, a.allocated_bytes);
}

TEST(Stats, HeapsAndThreadsAreCounted) {
  void* warm = hs_malloc(8);  // this thread has a heap from here on
  hs_free(warm);
  const hs_stats_t a = stats_now();
  hs_heap_t* h1 = hs_heap_new();
  hs_heap_t* h2 = hs_heap_new();
  ASSERT_TRUE(h1 && h2);
  EXPECT_EQ(stats_now().heaps, a.heaps + 2);
  hs_heap_delete(h1);
  hs_heap_destroy(h2);
  EXPECT_EQ(stats_now().heaps, a.heaps);

  std::atomic<int> stage{0};
  std::thread t([&] {
    void* p = hs_malloc(64);
    stage.store(1);
    while (stage.load() != 2) std::this_thread::yield();
    hs_free(p);
  });
  while (stage.load() != 1) std::this_thread::yield();
  const hs_stats_t during = stats_now();
  EXPECT_EQ(during.threads, a.threads + 1);
  EXPECT_GE(during.heaps, a.heaps + 1);
  stage.store(2);
  t.join();
  const hs_stats_t after = stats_now();
  EXPECT_EQ(after.threads, a.threads) << "an exited thread no longer counts";
  EXPECT_EQ(after.heaps, a.heaps);
  EXPECT_EQ(after.allocated_bytes, a.allocated_bytes);
}

// Frees that leave the fast path (huge blocks, checked pages) are counted on the block's heap
// when its owner frees them, like fast-path frees.
TEST(Stats, HeapStatsCountTheOwnersGenericFrees) {
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  void* huge = hs_heap_malloc(heap, 20 * kMiB);
  ASSERT_NE(huge, nullptr);
  hs_free(huge);
  hs_stats_t s = hs_test::heap_stats_now(heap);
  EXPECT_EQ(s.alloc_count, 1u);
  EXPECT_EQ(s.free_count, 1u);
  EXPECT_EQ(s.allocated_bytes, 0u);
  hs_heap_delete(heap);
}

TEST(Stats, HeapStatsCountOnlyThatHeap) {
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  void* outside = hs_malloc(500);  // default heap: must not show in heap's stats
  ASSERT_NE(outside, nullptr);
  void* a = hs_heap_malloc(heap, 100);
  void* b = hs_heap_malloc(heap, 1000);
  ASSERT_TRUE(a && b);
  hs_stats_t s = hs_test::heap_stats_now(heap);
  EXPECT_EQ(s.alloc_count, 2u);
  EXPECT_EQ(s.requested_bytes, 1100u);
  EXPECT_EQ(s.allocated_bytes, hs_usable_size(a) + hs_usable_size(b));
  hs_free(a);
  s = hs_test::heap_stats_now(heap);
  EXPECT_EQ(s.free_count, 1u);
  EXPECT_EQ(s.allocated_bytes, hs_usable_size(b));
  hs_free(b);
  hs_free(outside);
  hs_stats_t small;
  std::memset(&small, 0, sizeof(small));
  small.size = 0;
  EXPECT_EQ(hs_heap_stats_get(heap, &small), -1);
  hs_heap_delete(heap);
}

TEST(Stats, PrintWritesTheStatisticsBlock) {
  void* p = hs_malloc(1000);
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
#if defined(_WIN32)
  HANDLE read_end = nullptr;
  HANDLE write_end = nullptr;
  ASSERT_TRUE(CreatePipe(&read_end, &write_end, nullptr, 64 * 1024));
  hs_stats_print(static_cast<int>(HandleToLong(write_end)));
  CloseHandle(write_end);
  for (DWORD n; ReadFile(read_end, buf, sizeof(buf), &n, nullptr) && n > 0;) out.append(buf, n);
  CloseHandle(read_end);
#else
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  hs_stats_print(fds[1]);
  close(fds[1]);
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;)
    out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
#endif
  EXPECT_NE(out.find("heapscope stats"), std::string::npos) << out;
  EXPECT_GT(out.size(), 40u);
  // The process's resident size, as the OS reports it: near what this test reads itself.
  const size_t at = out.find("resident_bytes");
  ASSERT_NE(at, std::string::npos) << out;
  const double resident = std::strtod(out.c_str() + at + std::strlen("resident_bytes"), nullptr);
  const double own = static_cast<double>(hs_test::rss_bytes());
  EXPECT_GT(resident, 0.0) << out;
  EXPECT_NEAR(resident, own, 4.0 * kMiB) << out;
  hs_free(p);
}

TEST(Stats, CollectPurgesFreedMemory) {
  // 32 MiB of medium blocks, freed, then a forced collect: some of it goes back to the OS.
  std::vector<void*> blocks;
  for (int i = 0; i < 512; ++i) {
    void* p = hs_malloc(64 * kKiB);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, 64 * kKiB);
    blocks.push_back(p);
  }
  const hs_stats_t live = stats_now();
  for (void* p : blocks) hs_free(p);
  hs_collect(1);
  const hs_stats_t after = stats_now();
  EXPECT_GT(after.purged_bytes, live.purged_bytes);
  EXPECT_LT(after.committed_bytes, live.committed_bytes);
  EXPECT_GE(live.committed_bytes - after.committed_bytes, 16 * kMiB)
      << "committed " << live.committed_bytes << " -> " << after.committed_bytes;
  hs_collect(0);  // and the non-forcing form does not break anything
  void* p = hs_malloc(64 * kKiB);
  ASSERT_NE(p, nullptr);
  std::memset(p, 2, 64 * kKiB);
  hs_free(p);
}

TEST(Version, MatchesTheProject) { EXPECT_EQ(hs_version(), HS_TEST_EXPECTED_VERSION); }

// ---- options -------------------------------------------------------------------------------

TEST(Options, NamesMatchTheTable) {
  EXPECT_STREQ(hs_option_name(hs_option_verbose), "verbose");
  EXPECT_STREQ(hs_option_name(hs_option_show_stats), "show_stats");
  EXPECT_STREQ(hs_option_name(hs_option_purge_delay), "purge_delay");
  EXPECT_STREQ(hs_option_name(hs_option_huge_cache_bytes), "huge_cache_bytes");
  EXPECT_STREQ(hs_option_name(hs_option_check_frees), "check_frees");
}

TEST(Options, DefaultsWhenTheEnvironmentIsUnset) {
  if (std::getenv("HEAPSCOPE_PURGE_DELAY") == nullptr) {
    EXPECT_EQ(hs_option_get(hs_option_purge_delay), 10);
  }
  if (std::getenv("HEAPSCOPE_VERBOSE") == nullptr) {
    EXPECT_EQ(hs_option_get(hs_option_verbose), 0);
  }
  if (std::getenv("HEAPSCOPE_SHOW_STATS") == nullptr) {
    EXPECT_EQ(hs_option_get(hs_option_show_stats), 0);
  }
  if (std::getenv("HEAPSCOPE_HUGE_CACHE_BYTES") == nullptr) {
    EXPECT_EQ(hs_option_get(hs_option_huge_cache_bytes), 64L << 20);
  }
}

TEST(Options, SetThenGet) {
  for (int o = 0; o < hs_option_count_; ++o) {
    const auto option = static_cast<hs_option_t>(o);
    SCOPED_TRACE(hs_option_name(option));
    const long old = hs_option_get(option);
    hs_option_set(option, old + 3);
    EXPECT_EQ(hs_option_get(option), old + 3);
    hs_option_set(option, old);
    EXPECT_EQ(hs_option_get(option), old);
  }
  // purge_delay -1 means "never": the allocator keeps working.
  const long old = hs_option_get(hs_option_purge_delay);
  hs_option_set(hs_option_purge_delay, -1);
  EXPECT_EQ(hs_option_get(hs_option_purge_delay), -1);
  void* p = hs_malloc(3 * kMiB);
  ASSERT_NE(p, nullptr);
  hs_free(p);
  hs_option_set(hs_option_purge_delay, old);
}

#if !defined(_WIN32)
// Runs this executable again with extra environment variables, filtered to one test; returns
// its exit status and everything it wrote to stdout and stderr.
int run_self(const std::string& filter, const std::vector<std::string>& extra_env,
             std::string* output) {
  std::vector<std::string> env_strings(extra_env);
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "HEAPSCOPE_", 10) != 0) env_strings.emplace_back(*e);
  }
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe";
  std::string filter_arg = "--gtest_filter=" + filter;
  char* argv[] = {self.data(), filter_arg.data(), nullptr};
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return -1;
  }
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;)
    output->append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
#endif

// The child half of Options.EnvironmentVariablesAreRead (skipped when run on its own).
TEST(OptionsChild, ReportsEnvironment) {
  if (std::getenv("HS_TEST_OPTIONS_CHILD") == nullptr) GTEST_SKIP() << "child of another test";
  EXPECT_EQ(hs_option_get(hs_option_verbose), 1);
  EXPECT_EQ(hs_option_get(hs_option_show_stats), 1);
  EXPECT_EQ(hs_option_get(hs_option_purge_delay), 1234);
  EXPECT_EQ(hs_option_get(hs_option_huge_cache_bytes), 7340032);
  EXPECT_EQ(hs_option_get(hs_option_check_frees), 1);
  void* p = hs_malloc(100);  // something for the exit statistics to show
  ASSERT_NE(p, nullptr);
  hs_free(p);
}

#if !defined(_WIN32)
TEST(Options, EnvironmentVariablesAreRead) {
  std::string out;
  const int status = run_self("OptionsChild.ReportsEnvironment",
                              {"HS_TEST_OPTIONS_CHILD=1", "HEAPSCOPE_VERBOSE=1",
                               "HEAPSCOPE_SHOW_STATS=1", "HEAPSCOPE_PURGE_DELAY=1234",
                               "HEAPSCOPE_HUGE_CACHE_BYTES=7340032", "HEAPSCOPE_CHECK_FREES=1"},
                              &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
  EXPECT_NE(out.find("heapscope stats"), std::string::npos)
      << "HEAPSCOPE_SHOW_STATS=1 prints the statistics at exit:\n"
      << out;
}
#endif

#if defined(__linux__)
// The kernel's advice flags (VmFlags in /proc/self/smaps) of the mapping holding `address`:
// "nh" never huge pages, "hg" huge pages asked for.
std::string advice_flags_of(const void* address) {
  const auto target = reinterpret_cast<uintptr_t>(address);
  FILE* smaps = std::fopen("/proc/self/smaps", "r");
  if (smaps == nullptr) return "no smaps";
  char line[512];
  bool inside = false;
  std::string flags = "mapping not found";
  while (std::fgets(line, sizeof line, smaps) != nullptr) {
    unsigned long begin = 0;
    unsigned long end = 0;
    if (std::sscanf(line, "%lx-%lx ", &begin, &end) == 2 && std::strchr(line, ':') != nullptr &&
        std::strncmp(line, "VmFlags", 7) != 0) {
      inside = target >= begin && target < end;
      continue;
    }
    if (inside && std::strncmp(line, "VmFlags:", 8) == 0) {
      const std::string all(line + 8);
      flags.clear();
      if (all.find(" nh") != std::string::npos) flags += "nh";
      if (all.find(" hg") != std::string::npos) flags += "hg";
      if (flags.empty()) flags = "none";
      break;
    }
  }
  std::fclose(smaps);
  return flags;
}

// The child half of Options.TransparentHugePages* (skipped when run on its own): the segment
// holding a small block carries the advice HS_TEST_EXPECTED_ADVICE names.
TEST(OptionsChild, SegmentsCarryTheHugePageAdvice) {
  const char* expected = std::getenv("HS_TEST_EXPECTED_ADVICE");
  if (expected == nullptr) GTEST_SKIP() << "child of another test";
  void* block = hs_malloc(100);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(advice_flags_of(block), expected);
  hs_free(block);
}

// Where the system gives transparent huge pages to all memory, every 2 MiB region a segment
// touches would be resident whole (a program with a 2 MiB heap then holds 5-12 MiB): by
// default segments ask for none; 1 leaves it to the system, 2 asks for them.
TEST(Options, TransparentHugePagesAdviceFollowsTheOption) {
  if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0) {
    GTEST_SKIP() << "a kernel without transparent huge pages takes no advice about them";
  }
  if (hs_test::under_emulator()) GTEST_SKIP() << "a user-mode emulator keeps such advice";
  const std::pair<const char*, const char*> cases[] = {
      {"", "nh"}, {"0", "nh"}, {"1", "none"}, {"2", "hg"}};
  for (const auto& [value, advice] : cases) {
    SCOPED_TRACE(std::string("HEAPSCOPE_TRANSPARENT_HUGE_PAGES=") + value);
    std::vector<std::string> env = {std::string("HS_TEST_EXPECTED_ADVICE=") + advice};
    if (value[0] != '\0') env.push_back(std::string("HEAPSCOPE_TRANSPARENT_HUGE_PAGES=") + value);
    std::string out;
    EXPECT_EQ(run_self("OptionsChild.SegmentsCarryTheHugePageAdvice", env, &out), 0) << out;
    EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
  }
}
#endif

}  // namespace
