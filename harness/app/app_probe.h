// Proof that the preload takes effect in the user's program, before `hsbench app` measures
// anything. Two kinds of evidence:
//   static  what the file is (program_file.h): script chain, static ELF, set-uid, Go, allocator
//           symbols in the executable;
//   dynamic one probe run of the command per allocator with the tracing shim preloaded in
//           front of it (app_probe_shim.c): one record per process image that loaded it, with
//           its malloc-family call count and the file serving `malloc` there.
// Verdict, in plain words:
//   blocked  no process loaded the preload (static / set-uid / something cleared LD_PRELOAD),
//            every program defines its own malloc, or ~no malloc calls at all (Go, a Rust
//            global allocator, or a program that does not allocate): a table would be
//            meaningless, so none is produced unless --force;
//   per allocator: its library must serve malloc in every traced process that does not
//            define malloc itself, else that allocator is excluded, with the reason;
//   notes    a shell or driver that runs other programs (their records count), scripts, ...
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/app/app_sample_runner.h"
#include "harness/app/program_file.h"
#include "harness/registry/allocator_registry.h"

namespace heapscope::harness {

// Fewer malloc-family calls than this over the whole run: the allocator cannot matter.
inline constexpr std::uint64_t kFewAllocationCalls = 100;

struct ProbedImage {  // one program image that loaded the shim
  int pid = 0;
  int ppid = 0;
  std::string exe;
  std::string malloc_object;
  std::uint64_t allocs = 0;  // 0 when the image exec'ed or _exit'ed (no exit record)
  bool exited = false;
  bool self_served = false;  // malloc comes from its own executable
};

struct AllocatorProbe {
  std::string allocator;
  std::string expected_object;  // the file that should serve malloc
  std::string run_outcome;      // "ok" or "<kind>: <reason>" of the probe run
  std::vector<ProbedImage> images;
  std::uint64_t allocs = 0;
  bool serves = false;  // every traced image not self-served runs on expected_object
  std::string problem;  // plain words; empty when serves
};

struct AppProbeReport {
  std::vector<ProgramFile> chain;  // the command's file, then interpreters of scripts
  std::vector<AllocatorProbe> allocators;
  bool blocked = false;
  std::vector<std::string> problems;  // why blocked
  std::vector<std::string> notes;
};

struct AppProbeRequest {
  std::string executable;
  std::vector<std::string> argv;
  std::vector<std::string> base_env;
  std::string cwd;
  std::string stdin_path;
  double timeout_seconds = 300;
  std::string shim;  // the tracing shim library
  // Runs one probe with this environment (the shim in front of the allocator); default: the
  // command above through run_app_command. A suite case runs its setup, command and teardown.
  std::function<AppRunResult(const std::vector<std::string>& env)> run = nullptr;
};

// The tracing shim: HEAPSCOPE_APP_PROBE_SHIM, else the one built beside hsbench.
std::string app_probe_shim_path();

// Runs the probe for each allocator (available ones) and reaches the verdict.
AppProbeReport probe_application(const AppProbeRequest& request,
                                 const std::vector<AllocatorInfo>& allocators);

// Parses the shim's records ("start|exit \t pid \t ppid \t allocs \t frees \t object \t exe").
std::vector<ProbedImage> parse_probe_records(const std::string& text);

nlohmann::ordered_json app_probe_to_json(const AppProbeReport& report);

// The problems and notes as lines for the terminal.
std::string describe_probe(const AppProbeReport& report);

}  // namespace heapscope::harness
