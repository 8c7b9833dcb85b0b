// The hardened build against exploit-style misuse (hardening_probe.cc), each scenario run
// under the default library too: there the misuse must succeed, which shows the scenario
// really does what the hardened library is said to stop.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct ProbeRun {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ProbeRun run_probe(const char* library, const char* scenario) {
  // Named by this process and the scenario: CTest runs the tests in parallel processes.
  std::string stem = testing::TempDir() + "hardening_probe." + std::to_string(getpid()) + "." +
                     scenario + "." + (library == std::string(HS_HARDENED_LIBRARY) ? "h" : "d");
  std::string out_path = stem + ".out";
  std::string err_path = stem + ".err";
  std::string preload = std::string("LD_PRELOAD=") + library;
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0) _exit(126);
    dup2(out, 1);
    dup2(err, 2);
    signal(SIGABRT, SIG_DFL);
    char* argv[] = {const_cast<char*>(HS_HARDENING_PROBE), const_cast<char*>(scenario), nullptr};
    char* envp[] = {const_cast<char*>(preload.c_str()), const_cast<char*>("HEAPSCOPE_PROF=0"),
                    nullptr};
    execve(HS_HARDENING_PROBE, argv, envp);
    _exit(127);
  }
  ProbeRun run;
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  run.out = slurp(out_path);
  run.err = slurp(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return run;
}

// The address the probe named before the misuse ("victim 0x...").
std::string victim(const ProbeRun& run) {
  size_t at = run.err.find("victim ");
  if (at == std::string::npos) return "(no victim line)";
  size_t end = run.err.find('\n', at);
  return run.err.substr(at + 7, end - at - 7);
}

// Misuse that the default library lets through: the probe exits 0 and says what it achieved.
void expect_undetected(const char* scenario, const std::string& achieved) {
  ProbeRun run = run_probe(HS_DEFAULT_LIBRARY, scenario);
  EXPECT_EQ(run.exit_code, 0) << scenario << " stderr: " << run.err;
  EXPECT_EQ(run.out, achieved + "\n") << scenario;
}

// The hardened library stops it: abort, with a report naming the victim's address.
void expect_stopped(const char* scenario, const std::string& message) {
  ProbeRun run = run_probe(HS_HARDENED_LIBRARY, scenario);
  EXPECT_EQ(run.signal, SIGABRT) << scenario << " exit " << run.exit_code << " out: " << run.out;
  EXPECT_EQ(run.out, "") << scenario << ": the misuse went on";
  std::string expected = "heapscope: " + message + " (pointer " + victim(run) + ")\n";
  EXPECT_NE(run.err.find(expected), std::string::npos)
      << scenario << ": expected " << expected << "got: " << run.err;
}

TEST(Hardening, OverflowIntoAFreedBlocksLinkIsCaught) {
  expect_undetected("overflow-into-link", "exploited");
  expect_stopped("overflow-into-link",
                 "corrupted free list: the link of a freed block was overwritten");
}

TEST(Hardening, DoubleFreeIsCaught) {
  expect_undetected("double-free", "same-block-twice");
  expect_stopped("double-free", "double free detected");
}

TEST(Hardening, DoubleFreeFromOtherThreadsIsCaught) {
  expect_undetected("double-free-remote", "freed-twice");
  expect_stopped("double-free-remote", "double free detected");
}

TEST(Hardening, FreeOfAnInteriorPointerIsCaught) {
  expect_undetected("interior-free", "overlapping-block");
  expect_stopped("interior-free", "invalid free of a pointer that is not a block start");
  expect_undetected("huge-interior-free", "accepted");
  expect_stopped("huge-interior-free", "invalid free of a pointer that is not a block start");
}

TEST(Hardening, FreeOfAForeignPointerIsCaught) {
  expect_undetected("foreign-free", "ignored");
  expect_stopped("foreign-free", "free of a pointer heapscope does not own");
}

TEST(Hardening, GuardPagesSitBetweenMetadataAndData) {
  for (const char* scenario : {"write-before-first-slice", "write-before-huge-block"}) {
    expect_undetected(scenario, "wrote");
    ProbeRun run = run_probe(HS_HARDENED_LIBRARY, scenario);
    EXPECT_EQ(run.signal, SIGSEGV) << scenario << " exit " << run.exit_code;
    EXPECT_EQ(run.out, "") << scenario;
  }
}

TEST(Hardening, BlocksOfAFreshPageComeInRandomOrder) {
  expect_undetected("allocation-order", "sequential 199 of 199");
  ProbeRun run = run_probe(HS_HARDENED_LIBRARY, "allocation-order");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  int sequential = -1;
  ASSERT_EQ(sscanf(run.out.c_str(), "sequential %d of 199", &sequential), 1) << run.out;
  // A random order of 200 blocks (carved in runs of 42) puts about 1 in 42 next to its
  // predecessor; 50 would be far beyond chance.
  EXPECT_LT(sequential, 50);
}

TEST(Hardening, FreedBlocksDoNotHoldPlainAddresses) {
  expect_undetected("freed-link", "plain");
  ProbeRun run = run_probe(HS_HARDENED_LIBRARY, "freed-link");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "encoded\n");
}

}  // namespace
