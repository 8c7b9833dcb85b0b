#include "harness/campaign/sample_runner.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "harness/process/run_command.h"

namespace heapscope::harness {
namespace {

constexpr int kChildBadArguments = 2;
constexpr int kChildWrongAllocator = 3;
constexpr int kChildWorkloadErrors = 4;
constexpr size_t kStderrTail = 2048;

std::string tail(const std::string& text, size_t n) {
  return text.size() <= n ? text : text.substr(text.size() - n);
}

std::string first_line(const std::string& text) {
  const size_t start = text.find_first_not_of('\n');
  if (start == std::string::npos) return "";
  return text.substr(start, text.find('\n', start) - start);
}

// The last non-empty line of the child's stdout parsed as an object, or null.
nlohmann::ordered_json parse_last_line(const std::string& out) {
  size_t end = out.find_last_not_of("\n\r ");
  if (end == std::string::npos) return nullptr;
  size_t begin = out.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  auto j = nlohmann::ordered_json::parse(out.substr(begin, end - begin + 1), nullptr, false);
  return j.is_object() ? j : nlohmann::ordered_json();
}

// Why a printed measurement cannot be used, or "".
std::string measurement_problem(const nlohmann::ordered_json& m) {
  if (!m.is_object()) return "the child printed no JSON object";
  const auto rate = m.find("ops_per_sec");
  if (rate == m.end() || !rate->is_number() || !std::isfinite(rate->get<double>()) ||
      rate->get<double>() <= 0) {
    return "ops_per_sec missing or not a positive number";
  }
  const auto digest = m.find("stream_digest");
  if (digest == m.end() || !digest->is_string()) return "stream_digest missing";
  if (!m.contains("peak_rss_bytes")) return "peak_rss_bytes missing";
  return "";
}

}  // namespace

std::vector<std::string> sample_argv(const SampleRequest& r, const AllocatorInfo& allocator) {
  std::vector<std::string> argv{r.program,
                                "--workload",
                                r.workload,
                                "--threads",
                                std::to_string(r.threads),
                                "--ops",
                                std::to_string(r.ops),
                                "--seed",
                                std::to_string(r.seed),
                                "--block",
                                std::to_string(r.block),
                                "--expect-allocator",
                                allocator.resolved_path};
  if (r.verify) argv.emplace_back("--verify");
  return argv;
}

std::vector<std::string> sample_env(const AllocatorInfo& allocator) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> env{std::string("PATH=") +
                               (path != nullptr && *path != '\0' ? path : "/usr/bin:/bin")};
  const std::vector<std::string> own = child_environment(allocator);
  env.insert(env.end(), own.begin(), own.end());
  engine_subsystems_off_unless_set(env);
  return env;
}

SampleOutcome run_sample(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         double timeout_seconds) {
  SampleOutcome o;
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r =
      run_command(argv, &env, static_cast<int>(std::ceil(timeout_seconds * 1000.0)));
  o.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  o.exit_code = r.exit_code;
  o.signal = r.term_signal;
  o.stderr_tail = tail(r.err, kStderrTail);
  o.measurement = parse_last_line(r.out);

  if (!r.started) {
    o.kind = "spawn-failed";
    o.reason = r.error;
  } else if (r.timed_out) {
    o.kind = "timeout";
    o.reason =
        "no result within the " + std::to_string(timeout_seconds) + " s watchdog; child killed";
  } else if (r.term_signal != 0) {
    o.kind = "signal";
    o.reason = std::string("child died with signal ") + std::to_string(r.term_signal) + " (" +
               strsignal(r.term_signal) + ")";
  } else if (r.exit_code == kChildWrongAllocator) {
    o.kind = "allocator-mismatch";
    o.reason = first_line(r.err);
  } else if (r.exit_code == kChildBadArguments) {
    o.kind = "bad-arguments";
    o.reason = first_line(r.err);
  } else if (r.exit_code == kChildWorkloadErrors) {
    o.kind = "workload-errors";
    o.reason = "allocation failures or verify findings (exit 4)";
  } else if (r.exit_code != 0) {
    o.kind = "exit-status";
    o.reason = "child exited with status " + std::to_string(r.exit_code) + ": " + first_line(r.err);
  } else if (const std::string problem = measurement_problem(o.measurement); !problem.empty()) {
    o.kind = "bad-output";
    o.reason = problem;
  } else {
    o.ok = true;
  }
  return o;
}

nlohmann::ordered_json sample_failure_json(const std::string& kind, const std::string& reason,
                                           int exit_code, int signal,
                                           const std::string& stderr_tail) {
  return {{"kind", kind},
          {"reason", reason},
          {"exit_code", exit_code},
          {"signal", signal},
          {"stderr", stderr_tail}};
}

nlohmann::ordered_json failure_to_json(const SampleOutcome& o) {
  return sample_failure_json(o.kind, o.reason, o.exit_code, o.signal, o.stderr_tail);
}

}  // namespace heapscope::harness
