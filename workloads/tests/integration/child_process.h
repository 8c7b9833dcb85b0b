// Runs hs-workload as a subprocess (posix_spawn, pipes) and parses its JSON line.
#pragma once

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hs_test {

struct ChildResult {  // NOLINT(bugprone-exception-escape): implicit members of a json holder
  int exit_code = -1;
  std::string out, err;
  nlohmann::json json;  // parsed stdout (null if it was not one JSON line)
};

inline std::string slurp(int fd) {
  std::string s;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<std::size_t>(n));
  return s;
}

// `preload` empty: glibc. The environment is otherwise minimal, as in a campaign.
inline ChildResult run_child(const std::vector<std::string>& args,
                             const std::string& preload = "") {
  std::vector<std::string> argv_s = {HS_WORKLOAD_EXE};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_s.size() + 1);
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s = {"PATH=/usr/bin:/bin"};
  if (!preload.empty()) env_s.push_back("LD_PRELOAD=" + preload);
  std::vector<char*> envp;
  envp.reserve(env_s.size() + 1);
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  ChildResult r;
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return r;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  posix_spawn_file_actions_addclose(&fa, out_pipe[0]);
  posix_spawn_file_actions_addclose(&fa, err_pipe[0]);
  pid_t pid;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return r;
  }
  r.out = slurp(out_pipe[0]);  // outputs are small: reading one pipe then the other is safe
  r.err = slurp(err_pipe[0]);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  return r;
}

inline bool exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

inline const std::string kJemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
inline const std::string kMimalloc = "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2";

inline const std::vector<std::string> kAllWorkloads = {
    "tiny-hot",          "general-mix", "large-buffers", "cross-thread", "long-lived",
    "producer-consumer", "sawtooth",    "thread-churn",  "aligned",      "calloc"};

}  // namespace hs_test
