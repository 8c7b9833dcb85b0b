// The profiler across processes: the same seed gives identical samples in two processes (ASLR
// moves every address, so the comparison is on counts: the (live_samples, live_bytes)
// sequence and the sorted per-stack (objects, bytes) list); seed 0 gives different ones; the
// HEAPSCOPE_PROF_* environment (auto-start, exit dump in both formats, interval, stack depth,
// accumulation, seed, malformed values); and fork() while profiling. The child program is
// prof_child.cc (HS_PROF_CHILD is its path).
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../support/test_support.h"
#include "behaviour_support.h"

#ifndef HS_PROF_CHILD
#error "HS_PROF_CHILD must name the child program"
#endif

namespace {

using hs_prof_test::ChildReport;
using hs_prof_test::ChildResult;
using hs_prof_test::run_child;

const std::string kChild = HS_PROF_CHILD;

ChildResult determinism_run(const std::string& seed, const std::vector<std::string>& env = {}) {
  return run_child(kChild, {"determinism", seed}, env);
}

// ---- determinism ------------------------------------------------------------------------------

TEST(ProfProcess, SameSeedGivesIdenticalSamplesInTwoProcesses) {
  ChildResult a = determinism_run("424242");
  ChildResult b = determinism_run("424242");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(b.exit_code, 0) << b.out;
  ChildReport ra(a.out), rb(b.out);
  std::vector<std::string> steps = ra.with_prefix("STEP ");
  std::vector<std::string> stacks = ra.with_prefix("STACK ");
  ASSERT_EQ(steps.size(), 30u);
  ASSERT_GE(stacks.size(), 4u) << "the workload allocates from 8 distinct stacks";
  EXPECT_EQ(steps, rb.with_prefix("STEP "));
  EXPECT_EQ(stacks, rb.with_prefix("STACK "));
  EXPECT_EQ(ra.u64("SEED"), 424242u);
  EXPECT_EQ(rb.u64("SEED"), 424242u);
  EXPECT_GT(ra.u64("TOTAL"), 100u);
  EXPECT_EQ(ra.u64("TOTAL"), rb.u64("TOTAL"));
  // HEAPSCOPE_PROF_SEED with the same value reproduces the same samples.
  ChildResult c = determinism_run("env", {"HEAPSCOPE_PROF_SEED=424242"});
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_EQ(c.out, a.out);
  // And a different seed does not (the comparison can fail).
  ChildResult d = determinism_run("424243");
  ASSERT_EQ(d.exit_code, 0);
  EXPECT_NE(ChildReport(d.out).with_prefix("STEP "), steps);
}

TEST(ProfProcess, SeedZeroGivesDifferentSamplesAndDistinctDrawnSeeds) {
  ChildResult a = determinism_run("0");
  ChildResult b = determinism_run("0");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(b.exit_code, 0) << b.out;
  ChildReport ra(a.out), rb(b.out);
  EXPECT_NE(ra.u64("SEED"), 0u);
  EXPECT_NE(rb.u64("SEED"), 0u);
  EXPECT_NE(ra.u64("SEED"), UINT64_MAX);
  EXPECT_NE(ra.u64("SEED"), rb.u64("SEED"));
  EXPECT_NE(ra.with_prefix("STEP "), rb.with_prefix("STEP "));
  // HEAPSCOPE_PROF_SEED=0 is "truly random" too.
  ChildResult c = determinism_run("env", {"HEAPSCOPE_PROF_SEED=0"});
  ASSERT_EQ(c.exit_code, 0);
  EXPECT_NE(ChildReport(c.out).u64("SEED"), 0u);
  EXPECT_NE(ChildReport(c.out).u64("SEED"), ra.u64("SEED"));
}

// A deterministically-threaded program: threads created in a fixed order, released together,
// each doing a fixed workload. The profiler contract (engine/docs/design.md#profiler-contract)
// seeds each thread's stream from (session seed, thread creation ordinal), so the same seed gives
// the same per-thread samples in every run, whichever thread happens to allocate first. The
// creation ordinal comes from the pthread_create wrapper of the overriding libraries
// (override_thread.cc), so the child links heapscope_static. (Linked with heapscope_api, which
// overrides nothing, threads are numbered by first allocation and this cannot hold.) Regression:
// the child creates its threads with std::thread, whose pthread_create call is inside libstdc++.so;
// the wrapper must come along with malloc from libheapscope_static.a (override_malloc.cc anchors
// override_thread.cc), or streams follow first-allocation order.
TEST(ProfProcess, SameSeedThreadSamplesMatchWithHeapscopeStaticAndStdThread) {
#ifndef HS_PROF_CHILD_OVERRIDE
  GTEST_SKIP() << "no overriding child in a sanitizer build";
#else
  const std::string child = HS_PROF_CHILD_OVERRIDE;
  std::vector<std::string> runs;
  for (int i = 0; i < 4; ++i) {
    ChildResult r = run_child(child, {"threads", "777"}, {});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    ASSERT_GE(ChildReport(r.out).with_prefix("TSTACK ").size(), 4u) << r.out;
    runs.push_back(r.out);
  }
  for (size_t i = 1; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i], runs[0]) << "run " << i << " differs from run 0";
  }
  // Not vacuous: another seed gives other samples.
  ChildResult other = run_child(child, {"threads", "778"}, {});
  ASSERT_EQ(other.exit_code, 0);
  EXPECT_NE(other.out, runs[0]);
#endif
}

// ---- environment and the exit dump ------------------------------------------------------------

ChildReport report_run(const std::vector<std::string>& env, int* exit_code = nullptr) {
  ChildResult r = run_child(kChild, {"report"}, env);
  if (exit_code != nullptr) *exit_code = r.exit_code;
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return ChildReport(r.out);
}

TEST(ProfProcess, ExitDumpTextWithIntervalFromTheEnvironment) {
  hs_prof_test::TempDir dir;
  const std::string path = dir.file("exit.heap");
  ChildReport r =
      report_run({"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_SAMPLE_INTERVAL=12345",
                  "HEAPSCOPE_PROF_DUMP_AT_EXIT=" + path, "HEAPSCOPE_PROF_DUMP_FORMAT=text"});
  EXPECT_EQ(r.u64("ENABLED"), 1u);
  EXPECT_EQ(r.u64("INTERVAL"), 12345u);
  EXPECT_GT(r.u64("LIVE"), 0u);
  ASSERT_TRUE(hs_prof_test::file_exists(path));
  std::string text = hs_prof_test::read_file(path);
  EXPECT_EQ(text.rfind("heap profile:", 0), 0u) << text.substr(0, 200);
  EXPECT_NE(hs_prof_test::first_line(text).find("@ heap_v2/12345"), std::string::npos)
      << hs_prof_test::first_line(text);
  EXPECT_GE(hs_prof_test::text_sample_lines(text), 1u) << "the leaked blocks are in the dump";
  EXPECT_NE(text.find("\nMAPPED_LIBRARIES:\n"), std::string::npos);
}

TEST(ProfProcess, ExitDumpProtoIsGzip) {
  hs_prof_test::TempDir dir;
  for (const char* format : {"proto", "proto-symbolized"}) {
    const std::string path = dir.file(std::string("exit.") + format + ".pb.gz");
    report_run({"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_SAMPLE_INTERVAL=4096",
                "HEAPSCOPE_PROF_DUMP_AT_EXIT=" + path,
                std::string("HEAPSCOPE_PROF_DUMP_FORMAT=") + format});
    ASSERT_TRUE(hs_prof_test::file_exists(path)) << format;
    std::string data = hs_prof_test::read_file(path);
    ASSERT_GE(data.size(), 20u) << format;
    EXPECT_EQ(static_cast<unsigned char>(data[0]), 0x1f) << format;
    EXPECT_EQ(static_cast<unsigned char>(data[1]), 0x8b) << format;
  }
}

TEST(ProfProcess, ExitDumpFromTheConfigStructAndFallbackToTheEnvironment) {
  hs_prof_test::TempDir dir;
  const std::string proto = dir.file("config.pb.gz");
  ChildResult r = run_child(kChild, {"config-exit", proto, "1"}, {});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_GT(ChildReport(r.out).u64("LIVE"), 0u);
  ASSERT_TRUE(hs_prof_test::file_exists(proto));
  std::string data = hs_prof_test::read_file(proto);
  ASSERT_GE(data.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(data[0]), 0x1f);
  // OVERRIDE: the struct's path and format win over the environment's.
  const std::string text = dir.file("config.heap");
  const std::string env_path = dir.file("env.heap");
  r = run_child(kChild, {"config-exit", text, "0"},
                {"HEAPSCOPE_PROF_DUMP_AT_EXIT=" + env_path, "HEAPSCOPE_PROF_DUMP_FORMAT=proto"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_TRUE(hs_prof_test::file_exists(text));
  EXPECT_EQ(hs_prof_test::read_file(text).rfind("heap profile:", 0), 0u);
  EXPECT_FALSE(hs_prof_test::file_exists(env_path));
}

TEST(ProfProcess, ExitDumpWithoutAutoStartWritesAnEmptyProfile) {
  hs_prof_test::TempDir dir;
  const std::string path = dir.file("empty.heap");
  ChildReport r = report_run({"HEAPSCOPE_PROF_DUMP_AT_EXIT=" + path});
  EXPECT_EQ(r.u64("ENABLED"), 0u);
  ASSERT_TRUE(hs_prof_test::file_exists(path));
  std::string text = hs_prof_test::read_file(path);
  EXPECT_EQ(text.rfind("heap profile:", 0), 0u);
  EXPECT_EQ(hs_prof_test::text_sample_lines(text), 0u);
}

TEST(ProfProcess, MalformedFormatFallsBackToText) {
  hs_prof_test::TempDir dir;
  const std::string path = dir.file("exit.out");
  report_run({"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_DUMP_AT_EXIT=" + path,
              "HEAPSCOPE_PROF_DUMP_FORMAT=xml"});
  ASSERT_TRUE(hs_prof_test::file_exists(path));
  EXPECT_EQ(hs_prof_test::read_file(path).rfind("heap profile:", 0), 0u);
}

TEST(ProfProcess, StackDepthFromBtMax) {
  ChildReport deep = report_run({"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_SAMPLE_INTERVAL=4096"});
  EXPECT_EQ(deep.u64("DEPTH"), uint64_t{HS_PROF_DEFAULT_STACK_DEPTH});
  EXPECT_GT(deep.u64("MAXDEPTH"), 2u) << "the call chain is 7+ frames deep (control)";
  ChildReport shallow = report_run(
      {"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_SAMPLE_INTERVAL=4096", "HEAPSCOPE_PROF_BT_MAX=2"});
  EXPECT_EQ(shallow.u64("DEPTH"), 2u);
  EXPECT_GT(shallow.u64("LIVE"), 0u);
  EXPECT_LE(shallow.u64("MAXDEPTH"), 2u);
  EXPECT_GE(shallow.u64("MINDEPTH"), 1u);
}

TEST(ProfProcess, AccumFromTheEnvironment) {
  // The session HEAPSCOPE_PROF=1 starts accumulates by default (its exit profile would
  // otherwise be empty for a program that frees its data); HEAPSCOPE_PROF_ACCUM=0 turns it off.
  ChildReport by_default = report_run({"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_SAMPLE_INTERVAL=4096"});
  EXPECT_EQ(by_default.u64("ACCUM"), 1u);
  EXPECT_GT(by_default.u64("ACCUM_SAMPLES"), by_default.u64("LIVE"));
  ChildReport off = report_run(
      {"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_SAMPLE_INTERVAL=4096", "HEAPSCOPE_PROF_ACCUM=0"});
  EXPECT_EQ(off.u64("ACCUM"), 0u);
  EXPECT_EQ(off.u64("ACCUM_SAMPLES"), 0u);
  ChildReport on = report_run(
      {"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_SAMPLE_INTERVAL=4096", "HEAPSCOPE_PROF_ACCUM=1"});
  EXPECT_EQ(on.u64("ACCUM"), 1u);
  EXPECT_GT(on.u64("ACCUM_SAMPLES"), on.u64("LIVE")) << "freed samples stay in the accum counts";
}

TEST(ProfProcess, SeedAndBudgetFromTheEnvironment) {
  ChildReport r = report_run(
      {"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_SEED=31337", "HEAPSCOPE_PROF_MAX_BYTES=1048576"});
  EXPECT_EQ(r.u64("SEED"), 31337u);
  EXPECT_EQ(r.u64("MAXBYTES"), 1048576u);
  EXPECT_EQ(r.u64("INTERVAL"), uint64_t{HS_PROF_DEFAULT_INTERVAL});
}

TEST(ProfProcess, MalformedValuesAreIgnored) {
  ChildReport r = report_run({"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_SAMPLE_INTERVAL=12k",
                              "HEAPSCOPE_PROF_BT_MAX=abc", "HEAPSCOPE_PROF_SEED=-5",
                              "HEAPSCOPE_PROF_MAX_BYTES=1e6"});
  EXPECT_EQ(r.u64("ENABLED"), 1u);
  EXPECT_EQ(r.u64("INTERVAL"), uint64_t{HS_PROF_DEFAULT_INTERVAL});
  EXPECT_EQ(r.u64("DEPTH"), uint64_t{HS_PROF_DEFAULT_STACK_DEPTH});
  EXPECT_NE(r.u64("SEED"), 0u);
  EXPECT_NE(r.u64("SEED"), 5u);
  EXPECT_EQ(r.u64("MAXBYTES"), 0u);
  // A zero interval is not usable either: the default.
  ChildReport zero = report_run({"HEAPSCOPE_PROF=1", "HEAPSCOPE_PROF_SAMPLE_INTERVAL=0"});
  EXPECT_EQ(zero.u64("INTERVAL"), uint64_t{HS_PROF_DEFAULT_INTERVAL});
}

TEST(ProfProcess, NotStartedWithoutHeapscopeProf) {
  ChildReport r = report_run({"HEAPSCOPE_PROF_SAMPLE_INTERVAL=4096"});
  EXPECT_EQ(r.u64("ENABLED"), 0u);
  EXPECT_EQ(r.u64("LIVE"), 0u);
  ChildReport off = report_run({"HEAPSCOPE_PROF=0", "HEAPSCOPE_PROF_SAMPLE_INTERVAL=4096"});
  EXPECT_EQ(off.u64("ENABLED"), 0u);
}

// ---- fork while profiling ---------------------------------------------------------------------

TEST(ProfProcess, ForkWhileProfilingChildDumpsAndParentContinues) {
  hs_prof_stop();
  ASSERT_TRUE(hs_prof_start_seeded(4096, 0xF0F0));
  hs_prof_test::TempDir dir;
  std::vector<void*> live;
  for (int i = 0; i < 2000; ++i) live.push_back(hs_malloc(1024));
  const hs_prof_stats_t before = hs_prof_test::prof_stats();
  ASSERT_GT(before.live_samples, 0u);
  std::atomic<bool> stop{false};
  std::vector<std::thread> churn;
  for (int t = 0; t < 3; ++t) {
    churn.emplace_back([&stop, t] {
      hs_test::SplitMix64 rng(static_cast<uint64_t>(t) + 1);
      std::vector<void*> mine;
      while (!stop.load(std::memory_order_relaxed)) {
        mine.push_back(hs_malloc(rng.between(16, 20000)));
        if (mine.size() > 100) {
          for (void* p : mine) hs_free(p);
          mine.clear();
        }
      }
      for (void* p : mine) hs_free(p);
    });
  }
  constexpr int kForks = 6;
  for (int round = 0; round < kForks; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::string path = dir.file("child" + std::to_string(round) + ".heap");
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(20);
      // The child: only this thread exists. Allocate, dump, free, exit.
      std::vector<void*> blocks;
      for (int i = 0; i < 1000; ++i) blocks.push_back(hs_malloc(2048));
      hs_prof_stats_t s = hs_prof_test::blank_stats();
      if (!hs_prof_stats_get(&s) || s.enabled != 1 || s.live_samples < before.live_samples) {
        _exit(3);
      }
      if (!hs_prof_dump(path.c_str())) _exit(4);
      std::string proto;
      if (!hs_prof_dump_proto_writer(hs_prof_test::append_writer, &proto) || proto.size() < 2) {
        _exit(5);
      }
      for (void* p : blocks) hs_free(p);
      for (void* p : live) hs_free(p);
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status))
        << "child killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 0) << "round " << round;
    std::string text = hs_prof_test::read_file(path);
    EXPECT_EQ(text.rfind("heap profile:", 0), 0u) << "round " << round;
    EXPECT_GE(hs_prof_test::text_sample_lines(text), 1u);
  }
  stop.store(true);
  for (std::thread& t : churn) t.join();
  // The parent goes on: its samples are intact and still freed correctly.
  hs_prof_stats_t s = hs_prof_test::prof_stats();
  EXPECT_EQ(s.enabled, 1);
  EXPECT_GE(s.live_samples, before.live_samples);
  std::string dump;
  ASSERT_TRUE(hs_prof_dump_writer(hs_prof_test::append_writer, &dump));
  EXPECT_GE(hs_prof_test::text_sample_lines(dump), 1u);
  for (void* p : live) hs_free(p);
  s = hs_prof_test::prof_stats();
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.unique_stacks, 0u);
  hs_prof_stop();
}

}  // namespace
