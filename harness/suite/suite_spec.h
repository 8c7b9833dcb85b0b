// A suite file ("heapscope.suite", schema_version 1; harness/docs/suite.md, schema in
// harness/suites/suite.schema.json): named cases of real programs, each a command with its
// working directory, inputs generated from the recorded input seed, setup and teardown steps
// (a server started in the background, a readiness command polled until it succeeds), an output
// check and the metric to report. `hsbench suite` runs every case under every allocator.
//
// Placeholders in any command, cwd or env value: {work} (the case's work directory, where its
// inputs are written), {suite_dir} (the folder of the suite file), {input_seed} (decimal),
// {port} (a free loopback TCP port picked for each run of the case), and in a check command
// {stdout} (a file holding the command's stdout). Anything else in braces is an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/campaign/raw_run.h"

namespace heapscope::harness {

inline constexpr const char* kSuiteSchema = "heapscope.suite";
inline constexpr int kSuiteSchemaVersion = 1;

struct SuiteInput {
  std::string file;                    // relative to the work directory
  std::vector<std::string> generator;  // its stdout becomes the file
};

struct SuiteReady {
  std::vector<std::string> command;  // polled until it exits 0
  double timeout_seconds = 10;
};

struct SuiteStep {
  std::vector<std::string> command;
  bool background = false;  // a server: started, kept running until teardown, then stopped
  bool allocator = false;   // runs under the allocator under test
  std::optional<SuiteReady> ready;
};

struct SuiteCheck {
  std::string kind;                  // "stdout_sha256", "stdout_regex", "command", or "none"
  std::string value;                 // the digest or the pattern
  std::vector<std::string> command;  // kind "command": exit 0 = pass
};

struct SuiteMetric {
  std::string kind = "wall_seconds";  // or "throughput"
  std::string regex;                  // throughput: one capture group, a number, on stdout
  std::string unit;                   // throughput: what the number counts per second
  bool higher_is_better = false;      // wall_seconds: lower is better
};

struct SuiteCase {
  std::string name;  // [a-z0-9-]+, unique
  std::string description;
  std::vector<std::string> requires_programs;  // looked up in PATH: missing = case unavailable
  std::vector<SuiteInput> inputs;
  std::vector<SuiteStep> setup;
  std::vector<std::string> command;  // the measured command
  bool command_allocator = true;     // the measured command runs under the allocator
  std::string cwd = "{work}";
  std::vector<std::string> env;  // KEY=VALUE for every step of the case
  std::string stdin_file;        // in the work directory; empty = /dev/null
  std::vector<std::vector<std::string>> teardown;
  SuiteCheck check;
  SuiteMetric metric;
  std::string rss = "command";  // whose peak RSS is the memory metric: "command" or "server"
  std::string baseline;         // empty: the suite's
  std::string baseline_reason;  // why this case has its own baseline
  std::string note;
  double timeout_seconds = 0;  // 0: the suite's
};

struct SuiteSpec {
  std::string name;
  std::string description;
  std::string file;       // absolute path it was read from
  std::string suite_dir;  // its folder
  unsigned blocks = 10;
  unsigned warmup = 1;
  std::uint64_t input_seed = 1;
  double timeout_seconds = 60;
  std::string baseline = "glibc";
  unsigned quick_blocks = 3;
  std::vector<std::string> quick_cases;
  std::vector<SuiteCase> cases;
  Json source;  // the file as read (recorded in raw runs, so a resume needs no file)
};

// NAME (a built-in: "debian"; or a *.suite.json in HEAPSCOPE_SUITES_DIR) or a file path.
// Throws CampaignError naming the file and the offending field.
SuiteSpec load_suite(const std::string& name_or_path);

// Parses and validates a suite document; `file` locates {suite_dir} and names it in errors.
SuiteSpec suite_from_json(const Json& j, const std::string& file);

// The folders searched for built-in suites, in order.
std::vector<std::string> suite_search_dirs();

struct SuitePlaceholders {
  std::string work, suite_dir, port, stdout_path;
  std::uint64_t input_seed = 0;
};

// Replaces the placeholders; throws CampaignError on an unknown or unavailable one.
std::string expand(const std::string& text, const SuitePlaceholders& p);
std::vector<std::string> expand_all(const std::vector<std::string>& v, const SuitePlaceholders& p);

}  // namespace heapscope::harness
