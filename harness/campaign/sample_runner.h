// One sample = one fresh hs-workload child (harness/docs/protocol.md#campaigns): the exact argv, a
// clean environment (PATH, plus LD_PRELOAD and the allocator's own variables, nothing inherited),
// a watchdog, and a verdict. Every way a child can fail becomes a recorded failure kind:
//   spawn-failed, timeout, signal, allocator-mismatch (exit 3), bad-arguments (exit 2),
//   workload-errors (exit 4: allocation failures or verify findings), memory-protocol (exit 5, or
//   the handshake of memory_sampler.h did not complete), exit-status, bad-output; and
//   interrupted (a stop was requested, see watch_stop_flag: the caller discards the sample).
// With a latency rate the child must print its latency record (else bad-output).
// With `memory`, the child gets --memory-fd 3 and the parent samples its memory from /proc
// (memory_sampler.h, harness/docs/protocol.md#memory).
#pragma once

#include <csignal>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
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
  bool memory = false;  // --memory-fd 3: the memory protocol
  // --latency-rate: open-loop latency at this many stream ops/s (0 = unthrottled); unset: off.
  std::optional<std::uint64_t> latency_rate = std::nullopt;
};

// The memory protocol's descriptor in the child.
inline constexpr int kMemoryFd = 3;

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
  std::string stderr_tail;        // last ~2 KiB of the child's stderr
  nlohmann::ordered_json memory;  // MemorySampler::to_json, when argv asks for the protocol
};

// A flag a SIGINT/SIGTERM handler sets (campaign_exec.cc): while it is set, a child in flight is
// killed with its whole process group at once (children run in a group of their own, so a
// terminal's Ctrl-C reaches only hsbench) and run_sample returns kind "interrupted" instead of
// waiting for the child. nullptr: no stop request is watched.
void watch_stop_flag(const volatile std::sig_atomic_t* flag);

// Runs argv; when it holds "--memory-fd 3" the parent runs the memory protocol with these
// return points (seconds after the drain).
SampleOutcome run_sample(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         double timeout_seconds, const std::vector<double>& return_points = {});

// A failed sample's record in a raw run, the same for campaign and app samples:
// {"kind", "reason", "exit_code", "signal", "stderr"}.
nlohmann::ordered_json sample_failure_json(const std::string& kind, const std::string& reason,
                                           int exit_code, int signal,
                                           const std::string& stderr_tail);

// sample_failure_json of a campaign child's outcome.
nlohmann::ordered_json failure_to_json(const SampleOutcome& outcome);

}  // namespace heapscope::harness
