// One run of one suite case: setup steps (servers started in the background in process groups
// of their own, each polled with its readiness command until it answers or its timeout
// passes), the measured command (app_sample_runner.h: wall, user/sys, the process tree's peak
// RSS, stdout digest; the servers left out of that tree and kept alive), the servers' own peak
// RSS (VmHWM of each server and its descendants, read from /proc before they are stopped), the
// teardown commands, then every server stopped (SIGTERM to its group, SIGKILL after 5 s), and
// last the output check and the metric.
//
// Failure kinds (besides the measured command's own: spawn-failed, timeout, signal,
// exit-status, interrupted): setup (a setup step failed or a server never became ready),
// server-died (a server exited before teardown), output-check, metric-missing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/app/app_sample_runner.h"
#include "harness/suite/suite_spec.h"

namespace heapscope::harness {

struct CaseRunRequest {
  const SuiteCase* suite_case = nullptr;
  SuitePlaceholders places;                // work, suite_dir, input_seed (port is picked here)
  std::vector<std::string> allocator_env;  // steps under the allocator
  std::vector<std::string> plain_env;      // every other step
  double timeout_seconds = 60;
};

struct CaseRunResult {   // NOLINT(bugprone-exception-escape): implicit members of a json holder
  AppRunResult command;  // the measured command; ok/kind/reason are the case's verdict
  double metric = 0;     // the case's metric (seconds or the throughput), valid when ok
  std::uint64_t server_peak_rss_bytes = 0;
  std::vector<std::string> argv;  // the measured command as run
  std::string executable;
  std::string cwd;
  std::string port;
};

CaseRunResult run_case_once(const CaseRunRequest& request);

// The memory metric of a run: the server's peak or the command tree's (SuiteCase::rss).
std::uint64_t case_rss_bytes(const SuiteCase& c, const CaseRunResult& r);

// A free TCP port on 127.0.0.1 (bound and released), as text; empty when none can be had.
std::string free_loopback_port();

}  // namespace heapscope::harness
