#include "harness/registry/library_check.h"

#include "harness/process/run_command.h"

namespace heapscope::harness {
namespace {

constexpr int kProbeTimeoutMs = 10000;
constexpr int kProbeExitMismatch = 3;

// The first line of `text` that contains `needle`, or "".
std::string line_with(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at);
  const size_t end = text.find('\n', at);
  const size_t from = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::optional<std::string> allocator_library_problem(const std::string& library,
                                                     const std::vector<std::string>& child_env,
                                                     const ProbeCommand& probe) {
  std::vector<std::string> env = environment_with("LD_PRELOAD", "");
  env.insert(env.end(), child_env.begin(), child_env.end());
  std::vector<std::string> argv = probe;
  argv.push_back("--expect");
  argv.push_back(library);

  const CommandResult r = run_command(argv, &env, kProbeTimeoutMs);
  if (!r.started) return "probe could not start: " + r.error;
  if (r.timed_out) return "not loadable: probe child did not finish within 10 s";
  if (r.term_signal != 0) {
    return "not loadable: probe child died with signal " + std::to_string(r.term_signal);
  }
  if (r.exit_code == 0) return std::nullopt;
  // ld.so ignores a preload it cannot load and carries on with libc: report its reason.
  const std::string ld_error = line_with(r.err, "cannot be preloaded");
  if (!ld_error.empty()) return "not loadable: " + ld_error;
  if (r.exit_code == kProbeExitMismatch) {
    return "does not serve malloc in the child (" + first_line(line_with(r.err, "mismatch")) + ")";
  }
  return "probe failed (exit " + std::to_string(r.exit_code) + "): " + first_line(r.err);
}

}  // namespace heapscope::harness
