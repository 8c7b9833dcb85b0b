// The one way the harness starts a program: posix_spawn with the child's stdio, directory,
// environment and process group chosen by the caller. Waiting, watchdogs and measuring stay
// with the callers (run_command.h drains pipes; the app runner polls a pidfd and samples RSS),
// but every child is started, and its group killed, here.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace heapscope::harness {

struct SpawnRequest {
  std::string program;                            // a path, or a name looked up in PATH
  bool search_path = false;                       // look `program` up in PATH (posix_spawnp)
  std::vector<std::string> argv;                  // argv[0] included
  const std::vector<std::string>* env = nullptr;  // the whole environment; nullptr: ours
  std::string cwd;                                // empty: ours
  std::string stdin_path;                         // empty: ours (inherited)
  int stdout_fd = -1;                             // -1: ours (inherited)
  int stderr_fd = -1;                             // -1: ours (inherited)
  // One more descriptor for the child, as its fd `pass_fd_as` (e.g. a control socket); it must
  // differ from pass_fd_as and from 0-2 (dup2 onto itself would keep its close-on-exec flag).
  int pass_fd = -1;
  int pass_fd_as = 3;
  // A process group of its own, with no signal blocked or ignored, so that the whole tree the
  // program starts can be killed at once (kill_process_group) and Ctrl-C reaches only us.
  bool own_process_group = false;
};

// The child's pid, or -1 with *error set ("<program>: <strerror>").
pid_t spawn_process(const SpawnRequest& request, std::string* error);

// SIGKILL to every process of `group` (a pid spawned with own_process_group). Call it while the
// leader is an unreaped zombie at the latest, so the group id cannot have been reused.
void kill_process_group(pid_t group);

// The exit status of `pid` (waitpid, retried on EINTR).
int wait_for_exit(pid_t pid);

}  // namespace heapscope::harness
