#include "harness/suite/suite_case_runner.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

#include "harness/app/process_tree_rss.h"
#include "harness/app/program_file.h"
#include "harness/process/proc_status.h"
#include "harness/process/spawn.h"
#include "harness/process/steady_clock.h"

namespace heapscope::harness {
namespace {

constexpr std::size_t kKeptStdout = 4u << 20;  // enough for any case's report text
constexpr double kStopGraceSeconds = 5;

struct Server {
  pid_t pid = -1;
  std::string name;
  std::string log;
  bool allocator = false;
};

std::string tail_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  if (text.size() > 300) text = text.substr(text.size() - 300);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

// VmHWM of `pid` (bytes), 0 when unreadable.
std::uint64_t vm_hwm_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return proc_status_bytes(text.c_str(), "VmHWM").value_or(0);
}

bool exited(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

void stop(const Server& s) {
  kill(-s.pid, SIGTERM);
  const double deadline = steady_seconds() + kStopGraceSeconds;
  while (!exited(s.pid) && steady_seconds() < deadline) usleep(2000);
  kill_process_group(s.pid);  // the leader may be a zombie still: the group id is ours
  wait_for_exit(s.pid);
}

void fail(CaseRunResult& out, const std::string& kind, const std::string& reason) {
  out.command.ok = false;
  out.command.kind = kind;
  out.command.reason = reason;
}

AppRunResult run_helper(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                        const std::string& cwd, double timeout, const std::vector<pid_t>& spare) {
  AppRunRequest req;
  req.executable = resolve_command(argv[0], cwd, path_variable(env));
  req.argv = argv;
  req.env = env;
  req.cwd = cwd;
  req.timeout_seconds = timeout;
  req.spare = spare;
  if (req.executable.empty()) {
    AppRunResult r;
    r.kind = "spawn-failed";
    r.reason = "command not found: " + argv[0];
    return r;
  }
  return run_app_command(req);
}

// Starts a background step and waits for its readiness. Empty on success, else the reason.
std::string start_server(const SuiteStep& step, const std::vector<std::string>& argv,
                         const std::vector<std::string>& env,
                         const std::vector<std::string>& plain_env, const std::string& cwd,
                         const std::string& log, std::vector<Server>& servers,
                         const SuitePlaceholders& p) {
  SpawnRequest sr;
  sr.program = resolve_command(argv[0], cwd, path_variable(env));
  if (sr.program.empty()) return "command not found: " + argv[0];
  sr.argv = argv;
  sr.env = &env;
  sr.cwd = cwd;
  sr.stdin_path = "/dev/null";
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  sr.stdout_fd = fd;
  sr.stderr_fd = fd;
  sr.own_process_group = true;
  std::string error;
  const pid_t pid = spawn_process(sr, &error);
  if (fd >= 0) close(fd);
  if (pid < 0) return error;
  servers.push_back({pid, argv[0], log, step.allocator});
  if (!step.ready) return "";
  std::vector<pid_t> spare;
  for (const Server& s : servers) spare.push_back(s.pid);
  const std::vector<std::string> ready = expand_all(step.ready->command, p);
  const double deadline = steady_seconds() + step.ready->timeout_seconds;
  while (steady_seconds() < deadline && !app_interrupt_requested()) {
    if (exited(pid)) return argv[0] + " exited before it was ready: " + tail_of_file(log);
    if (run_helper(ready, plain_env, cwd, 5, spare).ok) return "";
    usleep(20000);
  }
  return argv[0] + " not ready within " + std::to_string(step.ready->timeout_seconds) + " s";
}

void check_output(const SuiteCase& c, CaseRunResult& out, const std::vector<std::string>& env,
                  const SuitePlaceholders& p, const std::string& cwd,
                  const std::vector<pid_t>& spare) {
  const SuiteCheck& check = c.check;
  if (check.kind == "stdout_sha256") {
    if (out.command.stdout_sha256 != check.value) {
      fail(out, "output-check",
           "stdout sha256 " + out.command.stdout_sha256.substr(0, 12) + "... is not the expected " +
               check.value.substr(0, 12) + "...");
    }
  } else if (check.kind == "stdout_regex") {
    const std::regex re(check.value, std::regex::ECMAScript | std::regex::multiline);
    if (!std::regex_search(out.command.stdout_text, re)) {
      fail(out, "output-check", "stdout does not match /" + check.value + "/");
    }
  } else if (check.kind == "command") {
    const std::string file = p.work + "/.stdout-" + c.name;
    {
      std::ofstream o(file, std::ios::binary | std::ios::trunc);
      o << out.command.stdout_text;
    }
    SuitePlaceholders with = p;
    with.stdout_path = file;
    const AppRunResult r = run_helper(expand_all(check.command, with), env, cwd, 60, spare);
    if (!r.ok) {
      fail(out, "output-check",
           "check command failed: " + r.reason +
               (r.stderr_tail.empty() ? "" : " (" + r.stderr_tail.substr(0, 200) + ")"));
    }
  }
}

void read_metric(const SuiteCase& c, CaseRunResult& out) {
  if (c.metric.kind != "throughput") {
    out.metric = out.command.wall_seconds;
    return;
  }
  std::smatch m;
  const std::regex re(c.metric.regex);
  if (!std::regex_search(out.command.stdout_text, m, re)) {
    fail(out, "metric-missing", "stdout has no match of /" + c.metric.regex + "/");
    return;
  }
  char* end = nullptr;
  const std::string text = m[1].str();
  out.metric = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(out.metric > 0)) {
    fail(out, "metric-missing", "the metric '" + text + "' is not a positive number");
  }
}

}  // namespace

std::string free_loopback_port() {
  const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return "";
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  std::string port;
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = std::to_string(ntohs(a.sin_port));
  }
  close(s);
  return port;
}

std::uint64_t case_rss_bytes(const SuiteCase& c, const CaseRunResult& r) {
  return c.rss == "server" ? r.server_peak_rss_bytes : r.command.peak_rss_tree_bytes;
}

CaseRunResult run_case_once(const CaseRunRequest& req) {
  const SuiteCase& c = *req.suite_case;
  CaseRunResult out;
  SuitePlaceholders p = req.places;
  p.port = free_loopback_port();
  out.port = p.port;
  std::vector<Server> servers;
  std::vector<pid_t> spare;
  try {
    out.cwd = expand(c.cwd, p);
    for (std::size_t i = 0; i < c.setup.size() && out.command.kind.empty(); ++i) {
      const SuiteStep& step = c.setup[i];
      const std::vector<std::string>& env = step.allocator ? req.allocator_env : req.plain_env;
      const std::vector<std::string> argv = expand_all(step.command, p);
      if (step.background) {
        const std::string log = p.work + "/.server-" + c.name + "-" + std::to_string(i) + ".log";
        const std::string why =
            start_server(step, argv, env, req.plain_env, out.cwd, log, servers, p);
        if (!why.empty()) fail(out, "setup", "setup step " + std::to_string(i) + ": " + why);
        spare.clear();
        for (const Server& s : servers) spare.push_back(s.pid);
      } else {
        const AppRunResult r = run_helper(argv, env, out.cwd, req.timeout_seconds, spare);
        if (!r.ok) fail(out, "setup", "setup step " + std::to_string(i) + ": " + r.reason);
      }
    }
    if (out.command.kind.empty()) {
      AppRunRequest run;
      out.argv = expand_all(c.command, p);
      run.env = c.command_allocator ? req.allocator_env : req.plain_env;
      out.executable = resolve_command(out.argv[0], out.cwd, path_variable(run.env));
      run.executable = out.executable;
      run.argv = out.argv;
      run.cwd = out.cwd;
      run.stdin_path = c.stdin_file.empty() ? "" : p.work + "/" + c.stdin_file;
      run.timeout_seconds = req.timeout_seconds;
      run.spare = spare;
      run.keep_stdout_bytes = kKeptStdout;
      if (out.executable.empty()) {
        fail(out, "spawn-failed", "command not found: " + out.argv[0]);
      } else {
        out.command = run_app_command(run);
      }
    }
    for (const Server& s : servers) {
      if (exited(s.pid)) {
        if (out.command.ok || out.command.kind.empty()) {
          fail(out, "server-died", s.name + " exited during the run: " + tail_of_file(s.log));
        }
        continue;
      }
      std::uint64_t rss = vm_hwm_bytes(s.pid);
      for (const pid_t d : descendants_of(s.pid)) rss += vm_hwm_bytes(d);
      out.server_peak_rss_bytes += rss;
    }
    for (const auto& t : c.teardown) {
      const AppRunResult r = run_helper(expand_all(t, p), req.plain_env, out.cwd, 30, spare);
      if (!r.ok && out.command.ok) fail(out, "teardown", "teardown failed: " + r.reason);
    }
  } catch (const std::exception& e) {
    fail(out, "setup", e.what());
  }
  for (const Server& s : servers) stop(s);
  if (out.command.ok) check_output(c, out, req.plain_env, p, out.cwd, {});
  if (out.command.ok) read_metric(c, out);
  return out;
}

}  // namespace heapscope::harness
