#include "harness/process/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include "harness/process/spawn.h"

extern char** environ;

namespace heapscope::harness {
namespace {

// Reads both pipes until each reaches EOF; polling both avoids a deadlock when the child fills
// one pipe while we block on the other. Returns false if the deadline passed first.
bool drain(int out_fd, int err_fd, int timeout_ms, std::string* out, std::string* err) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {out, err};
  int open_count = 2;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (open_count > 0) {
    int wait_ms = -1;
    if (timeout_ms > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      wait_ms = static_cast<int>(left.count());
    }
    const int ready = poll(fds, 2, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  return open_count == 0;
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const std::vector<std::string>* env,
                          int timeout_ms) {
  CommandResult result;
  if (argv.empty()) {
    result.error = "empty command";
    return result;
  }
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return result;
  }
  SpawnRequest request;
  request.program = argv[0];
  request.search_path = true;
  request.argv = argv;
  request.env = env;
  request.stdout_fd = out_pipe[1];
  request.stderr_fd = err_pipe[1];
  const pid_t pid = spawn_process(request, &result.error);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return result;
  }
  result.started = true;
  if (!drain(out_pipe[0], err_pipe[0], timeout_ms, &result.out, &result.err)) {
    result.timed_out = true;
    kill(pid, SIGKILL);
  }

  const int status = wait_for_exit(pid);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  return result;
}

std::vector<std::string> environment_with(const std::string& key, const std::string& value) {
  std::vector<std::string> env;
  const std::string prefix = key + "=";
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) env.emplace_back(*e);
  }
  if (!value.empty()) env.push_back(prefix + value);
  return env;
}

}  // namespace heapscope::harness
