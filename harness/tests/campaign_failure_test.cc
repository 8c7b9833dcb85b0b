// Failure handling: crashing, hanging and wrong-allocator children, allocators that are not
// available, corrupt raw runs, unknown names, and resume after the run itself was killed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "harness/campaign/sample_runner.h"
#include "harness/process/spawn.h"
#include "harness/tests/campaign_test_util.h"

namespace heapscope::harness::testing {
namespace {

std::string libc_dir() { return std::filesystem::path(HS_LIBC).parent_path().string(); }

const nlohmann::json* sample(const nlohmann::json& raw, const std::string& id) {
  for (const auto& s : raw["samples"]) {
    if (s["id"] == id) return &s;
  }
  return nullptr;
}

TEST(CampaignFailures, CrashAndHangAreRecordedAndTheCampaignGoesOn) {
  ScratchDir dir("crash");
  const CommandResult r = hsbench({"run",
                                   "--allocators",
                                   "glibc,crash,hang",
                                   "--allocator",
                                   std::string("crash=") + HS_CRASH_SHIM,
                                   "--allocator",
                                   std::string("hang=") + HS_HANG_SHIM,
                                   "--workloads",
                                   "tiny-hot",
                                   "--threads",
                                   "1",
                                   "--blocks",
                                   "2",
                                   "--ops",
                                   "20000",
                                   "--seed",
                                   "3",
                                   "--timeout",
                                   "1.5",
                                   "--out",
                                   dir / "raw.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto raw = read_json(dir / "raw.json");
  ASSERT_EQ(raw["samples"].size(), 6u);
  EXPECT_EQ(raw["complete"], true);
  for (int b = 0; b < 2; ++b) {
    const std::string blk = "tiny-hot/t1/b" + std::to_string(b) + "/";
    const auto* glibc = sample(raw, blk + "glibc");
    const auto* crash = sample(raw, blk + "crash");
    const auto* hang = sample(raw, blk + "hang");
    ASSERT_TRUE(glibc && crash && hang);
    EXPECT_EQ((*glibc)["status"], "ok");
    EXPECT_EQ((*crash)["status"], "failed");
    EXPECT_EQ((*crash)["failure"]["kind"], "signal");
    EXPECT_EQ((*crash)["failure"]["signal"], SIGABRT);
    EXPECT_EQ((*hang)["failure"]["kind"], "timeout");
    EXPECT_LT((*hang)["wall_seconds"].get<double>(), 5.0);
  }
  const CommandResult rep = hsbench({"report", dir / "raw.json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_TRUE(contains(rep.out, "failed: tiny-hot/t1/b0/crash: signal")) << rep.out;
  EXPECT_TRUE(contains(rep.out, "failed: tiny-hot/t1/b1/hang: timeout")) << rep.out;
  // Reproducing a failed sample fails too, with the reason.
  const CommandResult rp = hsbench({"reproduce", dir / "raw.json", "tiny-hot/t1/b0/crash"});
  EXPECT_EQ(rp.exit_code, 1);
  EXPECT_TRUE(contains(rp.err, "signal")) << rp.err;
}

TEST(CampaignFailures, ChildOnTheWrongAllocatorIsRefused) {
  // The child runs on glibc but is told to expect another library.
  const SampleOutcome o = run_sample({HS_WORKLOAD_EXE, "--workload", "tiny-hot", "--ops", "1000",
                                      "--expect-allocator", HS_SLOW_SHIM},
                                     {"PATH=/usr/bin:/bin"}, 10);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.kind, "allocator-mismatch");
  EXPECT_TRUE(contains(o.reason, "not on the expected allocator")) << o.reason;
}

TEST(CampaignFailures, LibraryThatDoesNotServeMallocIsSkippedByName) {
  ScratchDir dir("unavail");
  const CommandResult r =
      hsbench({"run", "--allocators", "glibc,notmalloc", "--allocator",
               "notmalloc=" + libc_dir() + "/libm.so.6", "--workloads", "tiny-hot", "--threads",
               "1", "--blocks", "2", "--ops", "5000", "--out", dir / "raw.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "allocator notmalloc unavailable")) << r.err;
  EXPECT_TRUE(contains(r.out, "unavailable: notmalloc")) << r.out;
  EXPECT_EQ(read_json(dir / "raw.json")["samples"].size(), 2u);
}

TEST(CampaignFailures, CorruptRawRunGivesAClearErrorAndIsNotOverwritten) {
  ScratchDir dir("corrupt");
  const std::string bad = dir / "bad.json";
  { std::ofstream(bad) << "{\"schema\": \"heapscope.raw-run\", \"samples\": ["; }
  const std::string before = read_file(bad);
  const CommandResult rep = hsbench({"report", bad});
  EXPECT_EQ(rep.exit_code, 1);
  EXPECT_TRUE(contains(rep.err, "not valid JSON")) << rep.err;
  const CommandResult rp = hsbench({"reproduce", bad, "tiny-hot/t1/b0/glibc"});
  EXPECT_EQ(rp.exit_code, 1);
  EXPECT_TRUE(contains(rp.err, bad)) << rp.err;
  const CommandResult res = hsbench({"run", "--resume", "--out", bad});
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_TRUE(contains(res.err, "cannot resume")) << res.err;
  EXPECT_EQ(read_file(bad), before);

  const std::string other = dir / "other.json";
  { std::ofstream(other) << "{\"schema\": \"something-else\"}"; }
  const CommandResult wrong = hsbench({"report", other});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_TRUE(contains(wrong.err, "not a raw run")) << wrong.err;
  // An existing file is never overwritten by a fresh run.
  const CommandResult clash =
      hsbench({"run", "--allocators", "glibc", "--workloads", "tiny-hot", "--threads", "1",
               "--blocks", "1", "--ops", "1000", "--out", other});
  EXPECT_EQ(clash.exit_code, 1);
  EXPECT_TRUE(contains(clash.err, "exists")) << clash.err;
  EXPECT_EQ(read_file(other), "{\"schema\": \"something-else\"}");
}

TEST(CampaignFailures, UnknownNamesAreUsageErrors) {
  ScratchDir dir("names");
  const CommandResult w = hsbench({"run", "--workloads", "tiny-hot,nope", "--out", dir / "a.json"});
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_TRUE(contains(w.err, "unknown workload 'nope'")) << w.err;
  EXPECT_TRUE(contains(w.err, "general-mix")) << w.err;
  const CommandResult a = hsbench({"run", "--allocators", "glibc,nope", "--out", dir / "b.json"});
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_TRUE(contains(a.err, "'nope'")) << a.err;
  const CommandResult c = hsbench({"run", "--campaign", "nope", "--out", dir / "c.json"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_TRUE(contains(c.err, "neither a built-in")) << c.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "a.json"));
}

TEST(CampaignFailures, ResumeAfterKillCompletesTheSameSampleSet) {
  ScratchDir dir("resume");
  const std::string out = dir / "raw.json";
  const std::vector<std::string> args = {HS_HSBENCH_EXE, "run",
                                         "--allocators", "glibc,jemalloc",
                                         "--workloads",  "tiny-hot,general-mix",
                                         "--threads",    "1",
                                         "--blocks",     "4",
                                         "--ops",        "3000000",
                                         "--seed",       "21",
                                         "--out",        out};
  const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(null_fd, 0);
  SpawnRequest request;
  request.program = args[0];
  request.argv = args;
  request.stdout_fd = null_fd;
  request.stderr_fd = null_fd;
  std::string error;
  const pid_t pid = spawn_process(request, &error);
  close(null_fd);
  ASSERT_GT(pid, 0) << error;
  // Kill it (no chance to clean up) once a few samples are on disk.
  std::size_t recorded = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (recorded < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto j = nlohmann::json::parse(read_file(out), nullptr, false);
    if (j.is_object() && j.contains("samples")) recorded = j["samples"].size();
  }
  kill(pid, SIGKILL);
  wait_for_exit(pid);
  const auto partial = read_json(out);
  ASSERT_GE(partial["samples"].size(), 3u);
  ASSERT_LT(partial["samples"].size(), 16u) << "the run finished before it was killed";
  EXPECT_EQ(partial["complete"], false);

  const CommandResult r = hsbench({"run", "--resume", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "resuming")) << r.err;
  const auto full = read_json(out);
  EXPECT_EQ(full["complete"], true);
  EXPECT_EQ(full["samples"].size(), 16u);
  std::set<std::string> expected;
  for (const char* w : {"tiny-hot", "general-mix"}) {
    for (int b = 0; b < 4; ++b) {
      for (const char* a : {"glibc", "jemalloc"}) {
        expected.insert(std::string(w) + "/t1/b" + std::to_string(b) + "/" + a);
      }
    }
  }
  EXPECT_EQ(sample_ids(full), expected);
  // What was recorded before the kill is kept as it was.
  for (std::size_t i = 0; i < partial["samples"].size(); ++i) {
    EXPECT_EQ(full["samples"][i], partial["samples"][i]);
  }
}

}  // namespace

// The pid of a live process whose command line holds every one of `needles`, or 0.
pid_t find_process(const std::vector<std::string>& needles) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_file(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    // hsbench's own command line names its child's arguments too.
    bool all = !cmdline.empty() && cmdline.rfind(HS_HSBENCH_EXE, 0) != 0;
    for (const std::string& n : needles) all = all && cmdline.find(n) != std::string::npos;
    if (all) return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

// A stop request that is already pending when the wait for a child begins (the signal came
// between the spawn and the wait) ends the sample at once, not at its timeout.
TEST(CampaignFailures, StopRequestedBeforeTheWaitEndsTheSampleAtOnce) {
  static volatile std::sig_atomic_t stop = 1;
  watch_stop_flag(&stop);
  const auto start = std::chrono::steady_clock::now();
  const SampleOutcome o = run_sample({"sleep", "30"}, {"PATH=/usr/bin:/bin"}, 60, {});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  watch_stop_flag(nullptr);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.kind, "interrupted") << o.reason;
  EXPECT_LT(seconds, 10.0) << "waited for the child instead of stopping it";
}

// Starts hsbench with `args` (its output discarded), waits until a process whose command line
// holds every string of `child` runs, sends SIGTERM and waits up to 20 s for hsbench to exit.
// Returns its exit status (-1 when it did not exit: it is then killed).
struct TerminatedRun {
  bool child_started = false;
  int exit_code = -1;
};
TerminatedRun terminate_once_running(const std::vector<std::string>& args,
                                     const std::vector<std::string>& child) {
  TerminatedRun result;
  const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_fd < 0) return result;
  SpawnRequest request;
  request.program = args[0];
  request.argv = args;
  request.stdout_fd = null_fd;
  request.stderr_fd = null_fd;
  std::string error;
  const pid_t pid = spawn_process(request, &error);
  close(null_fd);
  if (pid <= 0) return result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!result.child_started && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    result.child_started = find_process(child) != 0;
  }
  kill(pid, SIGTERM);
  int status = -1;
  const auto stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < stop_deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (status == -1 || !WIFEXITED(status)) {
    kill(pid, SIGKILL);
    wait_for_exit(pid);
    return result;
  }
  result.exit_code = WEXITSTATUS(status);
  return result;
}

// SIGTERM while a sample that would run for minutes is in flight: hsbench kills the child (its
// process group) at once instead of waiting for it, saves, exits 130 and leaves no child and no
// lock behind.
TEST(CampaignFailures, SigtermStopsTheChildInFlightAtOnce) {
  ScratchDir dir("sigterm");
  const std::string out = dir / "raw.json";
  const std::string seed = "918273645";
  const std::vector<std::string> child = {"hs-workload", "--ops 4000000000", "--seed " + seed};
  const TerminatedRun run = terminate_once_running(
      {HS_HSBENCH_EXE, "run", "--allocators", "glibc", "--workloads", "tiny-hot", "--threads", "1",
       "--blocks", "2", "--ops", "4000000000", "--seed", seed, "--out", out},
      child);
  ASSERT_TRUE(run.child_started) << "the sample never started";
  // The sample alone would take minutes: hsbench must not wait for it.
  ASSERT_EQ(run.exit_code, 130) << "hsbench did not stop with 130 within 20 s of SIGTERM";
  EXPECT_EQ(find_process(child), 0) << "the child outlived hsbench";
  EXPECT_FALSE(std::filesystem::exists(out + ".lock"));
  const auto raw = read_json(out);
  EXPECT_EQ(raw["complete"], false);
  EXPECT_TRUE(raw["samples"].empty()) << "the killed sample must be discarded";
}

// The same while `hsbench app` probes the command (before any sample): the probe run is killed
// with its process group, hsbench exits 130, and neither a child nor the lock is left.
TEST(CampaignFailures, SigtermDuringTheAppProbeStopsTheCommand) {
  ScratchDir dir("sigterm-probe");
  const std::string out = dir / "app.raw.json";
  const std::vector<std::string> child = {"sleep", "31.4159"};
  const TerminatedRun run = terminate_once_running(
      {HS_HSBENCH_EXE, "app", "--allocators", "glibc", "--out", out, "--", "sleep", "31.4159"},
      child);
  ASSERT_TRUE(run.child_started) << "the probe never ran the command";
  ASSERT_EQ(run.exit_code, 130) << "hsbench did not stop with 130 within 20 s of SIGTERM";
  EXPECT_EQ(find_process(child), 0) << "the probed command outlived hsbench";
  EXPECT_FALSE(std::filesystem::exists(out + ".lock"));
}

// An output folder that cannot be written is reported before any sample runs.
TEST(CampaignFailures, UnwritableOutputIsReportedBeforeAnySample) {
  const std::string out = "/proc/hsbench-no-such-dir/raw.json";  // not even root creates it
  const CommandResult r =
      hsbench({"run", "--allocators", "glibc", "--workloads", "tiny-hot", "--threads", "1",
               "--blocks", "2", "--ops", "4000000000", "--out", out},
              30000);
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_FALSE(r.timed_out) << "it ran samples instead of stopping at the output";
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "/proc/hsbench-no-such-dir")) << r.err;
}

// A full disk: every save that fails says so with its cause and hsbench stops (exit 1), never
// silently. The output folder is a 4 KiB tmpfs in a mount namespace of the command's own.
TEST(CampaignFailures, FullDiskIsReportedWithItsCause) {
  if (std::system("unshare -m true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no private mount namespace here (needs root)";
  }
  ScratchDir dir("full-disk");
  const std::string mount_point = dir / "small";
  std::filesystem::create_directories(mount_point);
  const CommandResult r = run_command({"unshare",
                                       "-m",
                                       "sh",
                                       "-c",
                                       "mount -t tmpfs -o size=4k tmpfs \"$0\" && exec \"$@\"",
                                       mount_point,
                                       HS_HSBENCH_EXE,
                                       "run",
                                       "--allocators",
                                       "glibc",
                                       "--workloads",
                                       "tiny-hot",
                                       "--threads",
                                       "1",
                                       "--blocks",
                                       "3",
                                       "--ops",
                                       "200000",
                                       "--seed",
                                       "7",
                                       "--out",
                                       mount_point + "/raw.json"},
                                      nullptr, 120000);
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "No space left on device")) << r.err;
}

}  // namespace heapscope::harness::testing
