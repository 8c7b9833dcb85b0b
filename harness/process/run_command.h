// Runs a program (no shell) and captures what it prints. Used for small helper tools such as
// dpkg-query and by tests that drive hsbench and hs-probe as child processes; campaign children
// get their own runner with watchdog and RSS sampling.
#pragma once

#include <string>
#include <vector>

namespace heapscope::harness {

struct CommandResult {
  bool started = false;    // false: the program could not be executed (see error)
  int exit_code = -1;      // valid when the child exited normally
  int term_signal = 0;     // non-zero when a signal ended the child
  bool timed_out = false;  // killed (SIGKILL) after the timeout
  std::string out;         // everything written to stdout
  std::string err;         // everything written to stderr
  std::string error;       // why the program could not be started
  bool ok() const { return started && term_signal == 0 && exit_code == 0; }
};

// argv[0] is looked up in PATH. env: the child's full environment ("KEY=VALUE"); nullptr means
// inherit ours. timeout_ms > 0: kill the child if it has not closed its output by then.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::string>* env = nullptr, int timeout_ms = 0);

// Our environment with `key` removed and, when `value` is non-empty, set to `value`.
std::vector<std::string> environment_with(const std::string& key, const std::string& value);

}  // namespace heapscope::harness
