// One run of the user's command for `hsbench app`: started through the launcher hs-launch
// (launcher_main.cc, a small static program, so the image the command has before exec is not
// hsbench's) in its own process group with an exact environment, stdin from a file (or
// /dev/null), stdout to a temporary file (hashed, never shown), stderr to another (its tail kept
// for failures), and measured from outside:
//   wall    the launcher's fork of the command to its reaping, like time(1);
//   user/sys the sum of wait4() usage of every process of the tree we reap (the first process
//           includes the children it reaped; orphans come to us because we are a subreaper);
//   peak_rss_tree  max over time of the SUM of RSS of all live descendants, sampled from /proc
//           every few ms (process_tree_rss.h), never below peak_rss (the largest single process
//           peak is a moment at which the tree held at least that much);
//   peak_rss ru_maxrss of the first process (reported by the launcher): the largest peak of it
//           and any process it reaped. The launcher's own RSS is left out of peak_rss_tree.
// After the first process exits, stragglers of its process group (and any other descendant)
// are killed and reaped, so nothing leaks into the next sample. The watchdog kills the group.
// Failure kinds: spawn-failed, timeout, signal, exit-status.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace heapscope::harness {

struct AppRunRequest {
  std::string executable;         // resolved path that is exec'ed
  std::vector<std::string> argv;  // argv[0] as the user typed it
  std::vector<std::string> env;   // the child's whole environment
  std::string cwd;                // empty: ours
  std::string stdin_path;         // empty: /dev/null
  double timeout_seconds = 300;
  double rss_interval_seconds = 0.005;
  // Processes (and their subtrees) that run beside the command and must survive it, e.g. a
  // suite case's server: left out of the tree's RSS, never killed or reaped here.
  std::vector<pid_t> spare = {};
  std::size_t keep_stdout_bytes = 0;  // > 0: the first bytes of stdout kept in stdout_text
};

struct AppRunResult {  // NOLINT(bugprone-exception-escape): implicit members of a json holder
  bool ok = false;
  std::string kind;    // failure kind; empty when ok
  std::string reason;  // one line for humans
  double wall_seconds = 0;
  double user_seconds = 0;
  double system_seconds = 0;
  std::uint64_t peak_rss_bytes = 0;
  std::uint64_t peak_rss_tree_bytes = 0;
  int exit_status = -1;  // valid when the first process exited normally
  int signal = 0;
  std::string stdout_sha256;
  std::uint64_t stdout_bytes = 0;
  std::string stderr_tail;  // last ~2 KiB
  std::string stdout_text;  // the first keep_stdout_bytes of stdout
};

// The launcher: $HEAPSCOPE_APP_LAUNCHER, the one installed beside hsbench, or the build tree's.
std::string app_launcher_path();

// Makes this process a child subreaper (once), so orphaned grandchildren are reaped by us.
void become_subreaper();

// Set by a signal handler to stop the run in flight: its process group is killed and the
// result is a failure of kind "interrupted".
void request_app_interrupt();
bool app_interrupt_requested();

AppRunResult run_app_command(const AppRunRequest& request);

// {wall_seconds, user_seconds, system_seconds, peak_rss_bytes, peak_rss_tree_bytes,
//  exit_status (null when the command did not exit by itself), stdout_sha256}
nlohmann::ordered_json app_measurement_json(const AppRunResult& r);

// {"kind", "reason", "exit_code", "signal", "stderr"}
nlohmann::ordered_json app_failure_json(const AppRunResult& r);

}  // namespace heapscope::harness
