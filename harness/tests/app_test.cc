// `hsbench app` end to end (integration): a real Debian program under every available
// allocator; the planted slow allocator as a positive control; a static binary, a program with
// its own malloc and a set-uid program detected and explained; a failing, a hanging and an
// output-changing command each reported and kept in the raw run. Plus the probe-record parser.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "harness/app/app_probe.h"
#include "harness/app/app_sample_runner.h"
#include "harness/process/proc_status.h"
#include "harness/tests/campaign_test_util.h"

namespace heapscope::harness::testing {
namespace {

const std::string kSlow = std::string("slow=") + HS_SLOW_SHIM;

std::vector<std::string> available_allocators() {
  const CommandResult r = hsbench({"allocators", "--json"});
  const auto registry = nlohmann::json::parse(r.out);
  std::vector<std::string> ids;
  for (const auto& a : registry["allocators"]) {
    // What "every allocator" runs: the opt-in (profiler-tax) rows only when named.
    if (a["available"] == true && !a.value("opt_in", false)) {
      ids.push_back(a["id"].get<std::string>());
    }
  }
  return ids;
}

std::vector<nlohmann::json> samples_of(const nlohmann::json& raw, const std::string& allocator) {
  std::vector<nlohmann::json> out;
  for (const auto& s : raw["samples"]) {
    if (s["allocator"] == allocator) out.push_back(s);
  }
  return out;
}

nlohmann::json summary_of(const ScratchDir& dir) {
  const CommandResult r =
      hsbench({"report", dir / "raw.json", "--summary-out", dir / "summary.json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return read_json(dir / "summary.json");
}

std::string all_output(const CommandResult& r) { return r.out + r.err; }

TEST(AppRealProgram, SortUnderEveryAvailableAllocatorWithIdenticalOutput) {
  ScratchDir dir("app-sort");
  {
    std::ofstream numbers(dir / "numbers.txt");
    unsigned long long x = 1;
    for (int i = 0; i < 20000; ++i) {
      x = x * 6364136223846793005ull + 1;
      numbers << (x >> 40) << "\n";
    }
  }
  const CommandResult r =
      hsbench({"app", "--blocks", "2", "--warmup", "0", "--same-output", "--seed", "7", "--out",
               dir / "raw.json", "--", "sort", "-n", dir / "numbers.txt"});
  ASSERT_EQ(r.exit_code, 0) << all_output(r);
  EXPECT_TRUE(contains(r.out, "speed vs glibc")) << r.out;

  const auto raw = read_json(dir / "raw.json");
  EXPECT_EQ(raw["schema"], "heapscope.raw-run");
  EXPECT_EQ(raw["campaign"]["name"], "app:sort");
  EXPECT_EQ(raw["complete"], true);
  EXPECT_EQ(raw["application"]["same_output"], true);
  EXPECT_EQ(raw["application"]["probe"]["blocked"], false);
  const std::vector<std::string> available = available_allocators();
  ASSERT_FALSE(available.empty());
  std::set<std::string> digests;
  for (const std::string& id : available) {
    const auto samples = samples_of(raw, id);
    ASSERT_EQ(samples.size(), 2u) << id;
    for (const auto& s : samples) {
      EXPECT_EQ(s["status"], "ok") << s.dump();
      const auto& m = s["measurement"];
      for (const char* key : {"wall_seconds", "user_seconds", "system_seconds", "peak_rss_bytes",
                              "peak_rss_tree_bytes", "exit_status", "stdout_sha256"}) {
        EXPECT_TRUE(m.contains(key)) << key;
      }
      EXPECT_GT(m["wall_seconds"].get<double>(), 0);
      EXPECT_GT(m["peak_rss_bytes"].get<double>(), 0);
      EXPECT_GE(m["peak_rss_tree_bytes"].get<double>(), m["peak_rss_bytes"].get<double>());
      EXPECT_EQ(m["exit_status"], 0);
      digests.insert(m["stdout_sha256"].get<std::string>());
    }
    EXPECT_TRUE(contains(r.out, id)) << id;
  }
  EXPECT_EQ(digests.size(), 1u) << "stdout differed between allocators";
  // Unavailable allocators are named, never run.
  for (const auto& a : raw["allocators"]) {
    if (a["available"] == false) {
      EXPECT_TRUE(samples_of(raw, a["id"]).empty());
    }
  }

  const CommandResult rep = hsbench({"report", dir / "raw.json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_TRUE(contains(rep.out, "speed vs glibc")) << rep.out;
  const auto summary = summary_of(dir);
  EXPECT_EQ(summary["metric"], "wall_seconds");
  EXPECT_EQ(summary["direction"], "lower-is-better");
  for (const std::string& id : available) {
    EXPECT_FALSE(summary_row(summary, "app:sort", 1, id).is_null()) << id;
  }
  const CommandResult rp = hsbench({"reproduce", dir / "raw.json", "app:sort/t1/b1/glibc"});
  EXPECT_EQ(rp.exit_code, 0) << all_output(rp);
  EXPECT_TRUE(contains(rp.out, "stdout digest matches")) << rp.out;
}

// Debian's python3 is a non-PIE executable whose malloc is a "canonical PLT" stub: dlsym finds
// it inside the executable, yet the program has no allocator of its own.
TEST(AppRealProgram, NonPiePythonIsNotMistakenForItsOwnAllocator) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  ScratchDir dir("app-python");
  const CommandResult r =
      hsbench({"app", "--allocators", "glibc,slow", "--allocator", kSlow, "--blocks", "1",
               "--warmup", "0", "--out", dir / "raw.json", "--", "/usr/bin/python3", "-c",
               "print(sum(len(str(i)) for i in range(20000)))"});
  ASSERT_EQ(r.exit_code, 0) << all_output(r);
  const auto raw = read_json(dir / "raw.json");
  for (const auto& a : raw["application"]["probe"]["allocators"]) {
    EXPECT_EQ(a["serves_malloc"], true) << a.dump();
  }
  EXPECT_EQ(raw["samples"].size(), 2u);
}

// The one parse of /proc/<pid>/status the harness's memory figures go through.
TEST(ProcStatus, FieldsAreReadByExactNameInBytes) {
  const char* text =
      "Name:\tcat\nVmHWM:\t    2048 kB\nVmRSSX:\t 9 kB\nVmRSS:\t    1560 kB\n"
      "RssAnon:\t     120 kB\nRssFile:\tx kB\n";
  EXPECT_EQ(proc_status_bytes(text, "VmRSS"), std::optional<std::uint64_t>{1560 * 1024});
  EXPECT_EQ(proc_status_bytes(text, "VmHWM"), std::optional<std::uint64_t>{2048 * 1024});
  EXPECT_EQ(proc_status_bytes(text, "RssAnon"), std::optional<std::uint64_t>{120 * 1024});
  EXPECT_EQ(proc_status_bytes(text, "Name"), std::nullopt);     // no number
  EXPECT_EQ(proc_status_bytes(text, "RssFile"), std::nullopt);  // no number
  EXPECT_EQ(proc_status_bytes(text, "VmSwap"), std::nullopt);   // absent
  EXPECT_EQ(proc_status_bytes(text, "Vm"), std::nullopt);       // a prefix is not a field
  EXPECT_EQ(proc_status_bytes("", "VmRSS"), std::nullopt);
}

// `sh -c 'a | b'`: two programs hold 40 MiB each at the same time. The tree's peak is their sum,
// which no single process's ru_maxrss shows.
TEST(AppRealProgram, PeakRssIsOfTheWholeProcessTree) {
  ScratchDir dir("app-tree");
  const std::string prog = HS_APP_PROGRAM;
  const CommandResult r = hsbench({"app", "--allocators", "glibc", "--blocks", "1", "--warmup", "0",
                                   "--out", dir / "raw.json", "--", "sh", "-c",
                                   prog + " --hold 40 | " + prog + " --hold 40 >&2"});
  ASSERT_EQ(r.exit_code, 0) << all_output(r);
  EXPECT_TRUE(contains(all_output(r), "program images")) << all_output(r);
  const auto raw = read_json(dir / "raw.json");
  ASSERT_EQ(raw["samples"].size(), 1u);
  const auto& m = raw["samples"][0]["measurement"];
  const double mib = 1 << 20;
  EXPECT_GT(m["peak_rss_bytes"].get<double>(), 40 * mib);
  EXPECT_LT(m["peak_rss_bytes"].get<double>(), 70 * mib);
  EXPECT_GT(m["peak_rss_tree_bytes"].get<double>(), 80 * mib) << m.dump();
}

// A small command's peak is its own. A child's ru_maxrss starts from its image before exec, so
// a command spawned from hsbench itself read hsbench's resident set (8.6 MiB under every
// allocator for this ~1.6 MiB program); started through hs-launch it reads its own.
TEST(AppRealProgram, ASmallCommandsPeakIsItsOwnNotHsbenchs) {
  ScratchDir dir("app-small-peak");
  const CommandResult r =
      hsbench({"app", "--allocators", "glibc", "--blocks", "2", "--warmup", "0", "--out",
               dir / "raw.json", "--", HS_APP_PROGRAM, "--allocs", "2000"});
  ASSERT_EQ(r.exit_code, 0) << all_output(r);
  const auto raw = read_json(dir / "raw.json");
  ASSERT_EQ(raw["samples"].size(), 2u);
  const double mib = 1 << 20;
  for (const auto& s : raw["samples"]) {
    const auto& m = s["measurement"];
    std::printf("peak %.2f MiB, tree %.2f MiB\n", m["peak_rss_bytes"].get<double>() / mib,
                m["peak_rss_tree_bytes"].get<double>() / mib);
    EXPECT_GT(m["peak_rss_bytes"].get<double>(), 0.5 * mib) << m.dump();
    EXPECT_LT(m["peak_rss_bytes"].get<double>(), 4 * mib) << m.dump();
    EXPECT_LT(m["peak_rss_tree_bytes"].get<double>(), 4 * mib) << m.dump();
  }
}

// The launcher hands back what the command did, not what it did itself: exit status, death by
// a signal, an exec that failed, and the command's own wall time.
TEST(AppLauncher, StatusSignalAndExecFailureAreTheCommands) {
  ASSERT_FALSE(app_launcher_path().empty());
  const auto run = [](std::vector<std::string> argv) {
    AppRunRequest req;
    req.executable = argv[0];
    req.argv = std::move(argv);
    req.env = {"PATH=/usr/bin:/bin"};
    req.timeout_seconds = 30;
    return run_app_command(req);
  };
  const AppRunResult exit3 = run({"/bin/sh", "-c", "exit 3"});
  EXPECT_EQ(exit3.kind, "exit-status") << exit3.reason;
  EXPECT_EQ(exit3.exit_status, 3);

  const AppRunResult segv = run({"/bin/sh", "-c", "kill -SEGV $$"});
  EXPECT_EQ(segv.kind, "signal") << segv.reason;
  EXPECT_EQ(segv.signal, SIGSEGV);

  const AppRunResult missing = run({"/nonexistent/hs-no-such-program"});
  EXPECT_EQ(missing.kind, "spawn-failed");
  EXPECT_TRUE(contains(missing.reason, "/nonexistent/hs-no-such-program: No such file"))
      << missing.reason;

  const AppRunResult sleeps = run({"/bin/sleep", "0.2"});
  EXPECT_TRUE(sleeps.ok) << sleeps.reason;
  EXPECT_GE(sleeps.wall_seconds, 0.2);
  EXPECT_LT(sleeps.wall_seconds, 10.0);
}

TEST(AppRealProgram, StdinAndCwdAreHonouredAndRecorded) {
  ScratchDir dir("app-stdin");
  std::string text;
  for (int i = 3000; i > 0; --i) text += std::to_string(i * 7919 % 10007) + "\n";
  std::ofstream(dir / "in.txt") << text;
  // `sort -n` reads stdin; `-o sorted.txt` writes relative to --cwd.
  const CommandResult r = hsbench({"app", "--allocators", "glibc", "--blocks", "2", "--warmup", "0",
                                   "--stdin", dir / "in.txt", "--cwd", dir.path().string(), "--out",
                                   dir / "raw.json", "--", "sort", "-n", "-o", "sorted.txt"});
  ASSERT_EQ(r.exit_code, 0) << all_output(r);
  const CommandResult expected = run_command({"sort", "-n", dir / "in.txt"});
  EXPECT_EQ(read_file(dir / "sorted.txt"), expected.out);
  const auto raw = read_json(dir / "raw.json");
  EXPECT_EQ(raw["application"]["stdin"], dir / "in.txt");
  EXPECT_EQ(raw["application"]["cwd"], std::filesystem::canonical(dir.path()).string());
  for (const auto& s : raw["samples"]) EXPECT_EQ(s["status"], "ok") << s.dump();
}

TEST(AppPlantedSlow, SerializingAllocatorIsReportedSlowerThanGlibc) {
  ScratchDir dir("app-slow");
  const CommandResult r = hsbench({"app", "--allocators", "glibc,slow", "--allocator", kSlow,
                                   "--blocks", "6", "--warmup", "0", "--seed", "11", "--out",
                                   dir / "raw.json", "--", HS_APP_PROGRAM, "--allocs", "100000"});
  ASSERT_EQ(r.exit_code, 0) << all_output(r);
  const auto e = summary_row(summary_of(dir), "app:hs_app_test_program", 1, "slow");
  ASSERT_FALSE(e.is_null());
  const auto& effect = e["effect_vs_baseline"];
  ASSERT_TRUE(effect["ci_valid"].get<bool>()) << effect.dump();
  // Effect = glibc wall / slow wall: below 1 means slower, and the CI must exclude 1.0.
  EXPECT_LT(effect["effect"].get<double>(), 1.0) << effect.dump();
  EXPECT_LT(effect["ci_high"].get<double>(), 1.0) << effect.dump();
}

TEST(AppDetection, StaticBinaryIsExplained) {
  if (std::string(HS_APP_STATIC).empty()) GTEST_SKIP() << "no libc.a: no static test program";
  ScratchDir dir("app-static");
  const CommandResult r = hsbench({"app", "--allocators", "glibc,slow", "--allocator", kSlow,
                                   "--out", dir / "raw.json", "--", HS_APP_STATIC});
  EXPECT_EQ(r.exit_code, 1) << all_output(r);
  EXPECT_TRUE(contains(r.out, "statically linked")) << r.out;
  const auto raw = read_json(dir / "raw.json");
  EXPECT_EQ(raw["application"]["probe"]["blocked"], true);
  EXPECT_EQ(raw["application"]["probe"]["program"][0]["dynamic"], false);
  EXPECT_TRUE(raw["samples"].empty());
}

TEST(AppDetection, ProgramWithItsOwnMallocIsExplained) {
  ScratchDir dir("app-own");
  const CommandResult r = hsbench({"app", "--allocators", "glibc,slow", "--allocator", kSlow,
                                   "--out", dir / "raw.json", "--", HS_APP_OWN_MALLOC});
  EXPECT_EQ(r.exit_code, 1) << all_output(r);
  EXPECT_TRUE(contains(r.out, "defines malloc itself")) << r.out;
  const auto raw = read_json(dir / "raw.json");
  EXPECT_EQ(raw["application"]["probe"]["blocked"], true);
  const auto& image = raw["application"]["probe"]["allocators"][0]["images"][0];
  EXPECT_EQ(image["self_served"], true) << image.dump();
}

TEST(AppDetection, SetUidProgramIsExplained) {
  // In the build tree, not /tmp: a nosuid mount would make the kernel ignore the bit.
  const std::filesystem::path dir =
      std::filesystem::path(HS_TEST_BUILD_DIR) / ("app-setuid-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string copy = (dir / "setuid_program").string();
  std::filesystem::copy_file(HS_APP_PROGRAM, copy,
                             std::filesystem::copy_options::overwrite_existing);
  const bool root = geteuid() == 0;
  if (root) {
    ASSERT_EQ(chown(copy.c_str(), 65534, 65534), 0);  // nobody: exec changes our uid
  }
  ASSERT_EQ(chmod(copy.c_str(), 04755), 0);
  const CommandResult r =
      hsbench({"app", "--allocators", "glibc,slow", "--allocator", kSlow, "--blocks", "1",
               "--warmup", "0", "--out", (dir / "raw.json").string(), "--", copy});
  const auto raw = read_json((dir / "raw.json").string());
  std::filesystem::remove_all(dir);
  EXPECT_EQ(raw["application"]["probe"]["program"][0]["setuid"], true);
  if (root) {
    EXPECT_EQ(r.exit_code, 1) << all_output(r);
    EXPECT_TRUE(contains(r.out, "set-uid")) << r.out;
    EXPECT_TRUE(contains(r.out, "ignores LD_PRELOAD")) << r.out;
  } else {  // set-uid to ourselves: the loader honours the preload, and we say so
    EXPECT_EQ(r.exit_code, 0) << all_output(r);
    EXPECT_TRUE(contains(all_output(r), "set-uid to you")) << all_output(r);
  }
}

TEST(AppFailures, FailingCommandIsRecordedAndTheRunGoesOn) {
  ScratchDir dir("app-exit");
  const CommandResult r = hsbench({"app", "--allocators", "glibc,slow", "--allocator", kSlow,
                                   "--blocks", "2", "--warmup", "0", "--out", dir / "raw.json",
                                   "--", HS_APP_PROGRAM, "--allocs", "5000", "--exit", "1"});
  ASSERT_EQ(r.exit_code, 0) << all_output(r);  // failed samples are data
  const auto raw = read_json(dir / "raw.json");
  ASSERT_EQ(raw["samples"].size(), 4u);
  for (const auto& s : raw["samples"]) {
    EXPECT_EQ(s["status"], "failed");
    EXPECT_EQ(s["failure"]["kind"], "exit-status");
    EXPECT_EQ(s["failure"]["exit_code"], 1);
    EXPECT_EQ(s["measurement"]["exit_status"], 1);  // the measurement is kept
  }
  EXPECT_TRUE(contains(r.out, "failed: app:hs_app_test_program/t1/b0/glibc: exit-status")) << r.out;
  const CommandResult rp =
      hsbench({"reproduce", dir / "raw.json", "app:hs_app_test_program/t1/b0/glibc"});
  EXPECT_EQ(rp.exit_code, 1);
  EXPECT_TRUE(contains(rp.err, "exit-status")) << rp.err;
}

TEST(AppFailures, HangingCommandTimesOut) {
  ScratchDir dir("app-timeout");
  // sleep hardly calls malloc, so the probe would refuse it: --force.
  const CommandResult r =
      hsbench({"app", "--allocators", "glibc", "--blocks", "1", "--warmup", "0", "--timeout", "1",
               "--force", "--out", dir / "raw.json", "--", "sleep", "10"});
  ASSERT_EQ(r.exit_code, 0) << all_output(r);
  const auto raw = read_json(dir / "raw.json");
  ASSERT_EQ(raw["samples"].size(), 1u);
  const auto& s = raw["samples"][0];
  EXPECT_EQ(s["failure"]["kind"], "timeout");
  EXPECT_LT(s["wall_seconds"].get<double>(), 3.0);
  EXPECT_TRUE(s["measurement"]["exit_status"].is_null());
  EXPECT_TRUE(contains(r.out, "timeout")) << r.out;
}

TEST(AppFailures, OutputThatDiffersUnderOneAllocatorIsNotAveraged) {
  ScratchDir dir("app-differs");
  const CommandResult r =
      hsbench({"app", "--allocators", "glibc,slow", "--allocator", kSlow, "--blocks", "2",
               "--warmup", "0", "--same-output", "--out", dir / "raw.json", "--", HS_APP_PROGRAM,
               "--allocs", "2000", "--print-allocator"});
  ASSERT_EQ(r.exit_code, 0) << all_output(r);
  const auto raw = read_json(dir / "raw.json");
  for (const auto& s : samples_of(raw, "glibc")) EXPECT_EQ(s["status"], "ok");
  for (const auto& s : samples_of(raw, "slow")) {
    EXPECT_EQ(s["status"], "failed");
    EXPECT_EQ(s["failure"]["kind"], "output-differs");
    EXPECT_TRUE(s["measurement"].contains("wall_seconds"));  // kept, just not averaged
  }
  EXPECT_EQ(raw["application"]["output_check"]["differing_samples"], 2);
  EXPECT_TRUE(contains(r.out, "stdout differed")) << r.out;
  const auto row = summary_row(summary_of(dir), "app:hs_app_test_program", 1, "slow");
  EXPECT_EQ(row["n"], 0);
  EXPECT_EQ(row["output_differs"], 2);
}

// Target: harness cost per sample beyond the command's own run < 20 ms, in CPU time (this
// process, hsbench and everything it reaped), so neighbours on a shared machine do not count.
// Measured as the extra cost of 40 more samples of /bin/true, minus what spawning /bin/true
// costs anyway. Wall time is printed and held to a loose bound only.
TEST(AppOverhead, PerSampleCostBeyondTheCommandIsUnder20Ms) {
  ScratchDir dir("app-overhead");
  struct Cost {
    double cpu = 0;
    double wall = 0;
  };
  auto measure = [](auto&& run) {
    auto cpu_now = [] {
      auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6;
      };
      rusage self{};
      rusage children{};
      getrusage(RUSAGE_SELF, &self);
      getrusage(RUSAGE_CHILDREN, &children);
      return seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(children.ru_utime) +
             seconds(children.ru_stime);
    };
    const double cpu_before = cpu_now();
    const auto start = std::chrono::steady_clock::now();
    run();
    return Cost{cpu_now() - cpu_before,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
  };
  auto campaign = [&](int blocks) {
    return measure([&] {
      const CommandResult r =
          hsbench({"app", "--allocators", "glibc", "--force", "--warmup", "0", "--blocks",
                   std::to_string(blocks), "--out",
                   dir / ("raw" + std::to_string(blocks) + ".json"), "--", "/bin/true"});
      EXPECT_EQ(r.exit_code, 0) << all_output(r);
    });
  };
  const Cost small = campaign(5);
  const Cost large = campaign(45);
  const Cost plain = measure([] {
    for (int i = 0; i < 40; ++i) run_command({"/bin/true"});
  });
  const double cpu_ms = (large.cpu - small.cpu - plain.cpu) / 40 * 1000;
  const double wall_ms = (large.wall - small.wall - plain.wall) / 40 * 1000;
  std::printf("per-sample overhead: %.2f ms CPU, %.2f ms wall\n", cpu_ms, wall_ms);
  EXPECT_LT(cpu_ms, 20.0);
  EXPECT_LT(wall_ms, 100.0);  // wall: only a sanity bound on a shared machine
}

TEST(AppProbeRecords, ExecChainsAndForkedChildrenAreSeparateImages) {
  const std::string text =
      "start\t10\t1\t3\t0\t/lib/libc.so.6\t/usr/bin/dash\n"
      "start\t10\t1\t2\t0\t/lib/libc.so.6\t/usr/bin/sort\n"  // dash exec'ed sort
      "start\t11\t10\t1\t0\t/lib/libc.so.6\t/usr/bin/sort\n"
      "exit\t12\t10\t77\t70\t/lib/libc.so.6\t/usr/bin/sort\n"  // forked, never exec'ed
      "exit\t11\t10\t500\t490\t/lib/libc.so.6\t/usr/bin/sort\n"
      "exit\t10\t1\t900\t880\t/lib/libc.so.6\t/usr/bin/sort\n"
      "torn line\n";
  const auto images = parse_probe_records(text);
  ASSERT_EQ(images.size(), 4u);
  EXPECT_EQ(images[0].exe, "/usr/bin/dash");
  EXPECT_FALSE(images[0].exited);
  EXPECT_EQ(images[1].allocs, 900u);
  EXPECT_TRUE(images[1].exited);
  EXPECT_EQ(images[2].allocs, 500u);
  EXPECT_EQ(images[3].pid, 12);
  EXPECT_EQ(images[3].allocs, 77u);
}

}  // namespace
}  // namespace heapscope::harness::testing
