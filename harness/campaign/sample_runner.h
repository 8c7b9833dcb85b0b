// One sample = one fresh hs-workload child (harness/docs/protocol.md#campaigns): the exact argv, a
// clean environment (PATH, plus LD_PRELOAD and the allocator's own variables, nothing inherited),
// a watchdog, and a verdict. Every way a child can fail becomes a recorded failure kind:
//   spawn-failed, timeout, signal, allocator-mismatch (exit 3), bad-arguments (exit 2),
//   workload-errors (exit 4: allocation failures or verify findings), exit-status, bad-output.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/registry/allocator_registry.h"

namespace heapscope::harness {

struct SampleRequest {
  std::string program;  // hs-workload
  std::string workload;
  unsigned threads = 1;
  std::uint64_t ops = 0;
  std::uint64_t seed = 0;
  std::uint64_t block = 0;
  bool verify = false;
};

std::vector<std::string> sample_argv(const SampleRequest& request, const AllocatorInfo& allocator);

// PATH (ours, or /usr/bin:/bin) + child_environment(allocator).
std::vector<std::string> sample_env(const AllocatorInfo& allocator);

struct SampleOutcome {  // NOLINT(bugprone-exception-escape): implicit members of a json holder
  bool ok = false;
  std::string kind;                    // failure kind (see above); empty when ok
  std::string reason;                  // one line for humans
  nlohmann::ordered_json measurement;  // the child's JSON line, when it printed one
  double wall_seconds = 0;             // spawn to reap, as seen by the parent
  int exit_code = -1;
  int signal = 0;
  std::string stderr_tail;  // last ~2 KiB of the child's stderr
};

SampleOutcome run_sample(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         double timeout_seconds);

// A failed sample's record in a raw run, the same for campaign and app samples:
// {"kind", "reason", "exit_code", "signal", "stderr"}.
nlohmann::ordered_json sample_failure_json(const std::string& kind, const std::string& reason,
                                           int exit_code, int signal,
                                           const std::string& stderr_tail);

// sample_failure_json of a campaign child's outcome.
nlohmann::ordered_json failure_to_json(const SampleOutcome& outcome);

}  // namespace heapscope::harness
