#include "harness/process/spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

extern char** environ;

namespace heapscope::harness {
namespace {

std::vector<char*> to_c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

pid_t spawn_process(const SpawnRequest& r, std::string* error) {
  if (r.argv.empty() || r.program.empty()) {
    *error = "empty command";
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!r.stdin_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, r.stdin_path.c_str(), O_RDONLY, 0);
  }
  if (r.stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, r.stdout_fd, STDOUT_FILENO);
  if (r.stderr_fd >= 0) posix_spawn_file_actions_adddup2(&actions, r.stderr_fd, STDERR_FILENO);
  if (r.pass_fd >= 0) posix_spawn_file_actions_adddup2(&actions, r.pass_fd, r.pass_fd_as);
  if (!r.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, r.cwd.c_str());

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (r.own_process_group) {
    sigset_t none;
    sigset_t all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
  }

  std::vector<char*> argv = to_c_strings(r.argv);
  std::vector<char*> env = r.env != nullptr ? to_c_strings(*r.env) : std::vector<char*>{};
  char** envp = r.env != nullptr ? env.data() : environ;
  pid_t pid = -1;
  const int rc = r.search_path
                     ? posix_spawnp(&pid, r.program.c_str(), &actions, &attr, argv.data(), envp)
                     : posix_spawn(&pid, r.program.c_str(), &actions, &attr, argv.data(), envp);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *error = r.program + ": " + std::strerror(rc);
    return -1;
  }
  return pid;
}

void kill_process_group(pid_t group) {
  if (group > 0) kill(-group, SIGKILL);
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace heapscope::harness
