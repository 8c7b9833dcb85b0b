#include "harness/app/app_sample_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/sha256.h"
#include "harness/app/process_tree_rss.h"
#include "harness/campaign/sample_runner.h"
#include "harness/process/spawn.h"
#include "harness/process/steady_clock.h"
#include "harness/registry/engine_libraries.h"

namespace heapscope::harness {
namespace {

constexpr std::size_t kStderrTail = 2048;

volatile std::sig_atomic_t g_interrupt = 0;

double to_seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

// An unlinked temporary file (the descriptor keeps it alive), or -1.
int anonymous_temp_file() {
  std::error_code ec;
  std::string path = (std::filesystem::temp_directory_path(ec) / "hsbench-app-XXXXXX").string();
  const int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd >= 0) unlink(path.c_str());
  return fd;
}

std::string tail_of(int fd, std::size_t n) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size <= 0) return "";
  const auto size = static_cast<std::size_t>(st.st_size);
  const std::size_t take = std::min(size, n);
  std::string out(take, '\0');
  const ssize_t got = pread(fd, out.data(), take, static_cast<off_t>(size - take));
  out.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return out;
}

std::string last_line(const std::string& text) {
  const std::size_t end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "";
  const std::size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

// Spawns the command through the launcher (launcher_main.cc) in a new process group with its
// stdio redirected and the launcher's report file as its fd 3; returns the launcher's pid or -1
// with *error set.
pid_t spawn(const AppRunRequest& r, const std::string& launcher, int out_fd, int err_fd,
            int report_fd, std::string* error) {
  SpawnRequest request;
  request.program = launcher;
  request.argv = {launcher, "3", r.executable};
  request.argv.insert(request.argv.end(), r.argv.begin(), r.argv.end());
  request.env = &r.env;
  request.cwd = r.cwd;
  request.stdin_path = r.stdin_path.empty() ? "/dev/null" : r.stdin_path;
  request.stdout_fd = out_fd;
  request.stderr_fd = err_fd;
  request.pass_fd = report_fd;
  request.pass_fd_as = 3;
  request.own_process_group = true;
  return spawn_process(request, error);
}

// The launcher's one-line report: exec's errno, or the command's wait status, fork-to-reap
// time and ru_maxrss. Absent when the launcher was killed (timeout, interrupt).
struct LaunchReport {
  bool present = false;
  int exec_errno = 0;
  int status = 0;
  long long wall_ns = 0;
  long maxrss_kib = 0;
  long long user_us = 0;
  long long sys_us = 0;
};

LaunchReport read_launch_report(int fd) {
  LaunchReport rep;
  char line[160] = {};
  const ssize_t n = pread(fd, line, sizeof line - 1, 0);
  if (n <= 0) return rep;
  rep.present =
      std::sscanf(line, "exec_errno=%d", &rep.exec_errno) == 1 ||
      std::sscanf(line, "status=%d wall_ns=%lld maxrss_kib=%ld user_us=%lld sys_us=%lld",
                  &rep.status, &rep.wall_ns, &rep.maxrss_kib, &rep.user_us, &rep.sys_us) == 5;
  return rep;
}

void kill_tree(pid_t group, const std::vector<pid_t>& spare) {
  kill_process_group(group);
  for (const pid_t p : descendants_of(getpid(), spare)) kill(p, SIGKILL);
}

bool spared(const std::vector<pid_t>& spare, pid_t p) {
  return std::find(spare.begin(), spare.end(), p) != spare.end();
}

// Waits until `pid` (the launcher) exits, the deadline passes or an interrupt arrives, sampling
// the tree's RSS every `interval` seconds, the launcher's own left out (it only waits, and is
// there under every allocator). Returns true when it exited (it is not reaped yet).
bool watch(pid_t pid, double deadline, double interval, const std::vector<pid_t>& spare,
           std::uint64_t* peak_tree) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  bool exited = false;
  const auto tree = [&] { return descendants_rss_bytes(spare, pid); };
  *peak_tree = std::max(*peak_tree, tree());
  while (!exited && g_interrupt == 0) {
    const double left = deadline - steady_seconds();
    if (left <= 0) break;
    const int wait_ms =
        static_cast<int>(std::ceil(std::min(left, interval) * 1000.0));  // never 0 while left > 0
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      exited = poll(&p, 1, wait_ms) > 0;
    } else {  // no pidfd (kernel < 5.3): poll the state without reaping
      siginfo_t info{};
      exited = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
               info.si_pid == pid;
      if (!exited) usleep(1000);
    }
    if (!exited) *peak_tree = std::max(*peak_tree, tree());
  }
  if (pidfd >= 0) close(pidfd);
  return exited;
}

void classify(AppRunResult& o, bool timed_out, bool interrupted, int status, double timeout) {
  if (interrupted) {
    o.kind = "interrupted";
    o.reason = "interrupted by the user; the command was killed";
  } else if (timed_out) {
    o.kind = "timeout";
    o.reason = "no exit within the " + std::to_string(timeout) +
               " s watchdog; the process group was killed";
  } else if (WIFSIGNALED(status)) {
    o.signal = WTERMSIG(status);
    o.kind = "signal";
    o.reason = std::string("the command died with signal ") + std::to_string(o.signal) + " (" +
               strsignal(o.signal) + ")";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    o.kind = "exit-status";
    o.reason = "the command exited with status " + std::to_string(o.exit_status);
    if (const std::string line = last_line(o.stderr_tail); !line.empty()) o.reason += ": " + line;
  } else {
    o.ok = true;
  }
}

}  // namespace

std::string app_launcher_path() {
  return private_file("HEAPSCOPE_APP_LAUNCHER",
                      std::string(HS_INSTALL_LIBEXECDIR) + "/heapscope/hs-launch", HS_APP_LAUNCHER);
}

void become_subreaper() {
  static const bool done = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  (void)done;
}

void request_app_interrupt() { g_interrupt = 1; }
bool app_interrupt_requested() { return g_interrupt != 0; }

AppRunResult run_app_command(const AppRunRequest& r) {
  AppRunResult o;
  become_subreaper();
  const std::string launcher = app_launcher_path();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(launcher, ec)) {
    o.kind = "spawn-failed";
    o.reason = "hs-launch, the launcher hsbench app starts commands through, is not at " +
               launcher + " (an incomplete install? HEAPSCOPE_APP_LAUNCHER names it)";
    return o;
  }
  const int out_fd = anonymous_temp_file();
  const int err_fd = anonymous_temp_file();
  const int report_fd = anonymous_temp_file();
  const auto close_files = [&] {
    for (const int fd : {out_fd, err_fd, report_fd}) {
      if (fd >= 0) close(fd);
    }
  };
  if (out_fd < 0 || err_fd < 0 || report_fd < 0) {
    close_files();
    o.kind = "spawn-failed";
    o.reason = std::string("cannot create a temporary file: ") + std::strerror(errno);
    return o;
  }
  const double start = steady_seconds();
  const pid_t pid = spawn(r, launcher, out_fd, err_fd, report_fd, &o.reason);
  if (pid < 0) {
    close_files();
    o.kind = "spawn-failed";
    return o;
  }
  const bool exited = watch(pid, start + r.timeout_seconds, r.rss_interval_seconds, r.spare,
                            &o.peak_rss_tree_bytes);
  o.wall_seconds = steady_seconds() - start;
  const bool interrupted = !exited && g_interrupt != 0;
  // Whatever the command left running (or all of it, after a timeout) is killed while its
  // leader is still an unreaped zombie, so the group id cannot have been reused.
  kill_tree(pid, r.spare);

  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  // The launcher's usage holds the command's (it reaped it) and its own exec, fork and wait, a
  // fraction of a millisecond. Its report gives the command's alone: wall time, status, CPU and
  // peak (the launcher's own ru_maxrss would be at least its own image).
  const LaunchReport report = read_launch_report(report_fd);
  if (report.present && report.exec_errno != 0) {
    close_files();
    o.kind = "spawn-failed";
    o.reason = r.executable + ": " + std::strerror(report.exec_errno);
    return o;
  }
  o.user_seconds = to_seconds(usage.ru_utime);
  o.system_seconds = to_seconds(usage.ru_stime);
  o.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
  if (report.present) {
    status = report.status;
    o.wall_seconds = static_cast<double>(report.wall_ns) * 1e-9;
    o.user_seconds = static_cast<double>(report.user_us) * 1e-6;
    o.system_seconds = static_cast<double>(report.sys_us) * 1e-6;
    o.peak_rss_bytes = static_cast<std::uint64_t>(report.maxrss_kib) * 1024;
  }
  if (WIFEXITED(status)) o.exit_status = WEXITSTATUS(status);

  // The stragglers killed above are reaped here, their usage counted. With spared processes
  // alive a blocking wait for any child would wait for them: poll until only they are left.
  const double reap_deadline = steady_seconds() + 5.0;
  for (;;) {
    rusage more{};
    int ignored = 0;
    const pid_t reaped = wait4(-1, &ignored, r.spare.empty() ? 0 : WNOHANG, &more);
    if (reaped < 0 && errno == EINTR) continue;
    if (reaped < 0) break;
    if (reaped == 0) {
      if (descendants_of(getpid(), r.spare).empty() || steady_seconds() > reap_deadline) break;
      usleep(1000);
      continue;
    }
    if (spared(r.spare, reaped)) continue;  // a spared process died: its owner finds out
    o.user_seconds += to_seconds(more.ru_utime);
    o.system_seconds += to_seconds(more.ru_stime);
    o.peak_rss_bytes =
        std::max(o.peak_rss_bytes, static_cast<std::uint64_t>(more.ru_maxrss) * 1024);
  }
  o.peak_rss_tree_bytes = std::max(o.peak_rss_tree_bytes, o.peak_rss_bytes);

  struct stat st {};
  if (fstat(out_fd, &st) == 0) o.stdout_bytes = static_cast<std::uint64_t>(st.st_size);
  std::string error;
  o.stdout_sha256 =
      base::sha256_file_hex("/proc/self/fd/" + std::to_string(out_fd), &error).value_or("");
  o.stderr_tail = tail_of(err_fd, kStderrTail);
  if (r.keep_stdout_bytes > 0) {
    o.stdout_text.resize(std::min<std::size_t>(r.keep_stdout_bytes, o.stdout_bytes));
    const ssize_t got = pread(out_fd, o.stdout_text.data(), o.stdout_text.size(), 0);
    o.stdout_text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  }
  close_files();
  classify(o, !exited && !interrupted, interrupted, status, r.timeout_seconds);
  return o;
}

nlohmann::ordered_json app_measurement_json(const AppRunResult& r) {
  const bool exited =
      r.kind != "timeout" && r.kind != "interrupted" && r.kind != "spawn-failed" && r.signal == 0;
  return {
      {"wall_seconds", r.wall_seconds},
      {"user_seconds", r.user_seconds},
      {"system_seconds", r.system_seconds},
      {"peak_rss_bytes", r.peak_rss_bytes},
      {"peak_rss_tree_bytes", r.peak_rss_tree_bytes},
      {"exit_status", exited ? nlohmann::ordered_json(r.exit_status) : nlohmann::ordered_json()},
      {"stdout_sha256", r.stdout_sha256}};
}

nlohmann::ordered_json app_failure_json(const AppRunResult& r) {
  return sample_failure_json(r.kind, r.reason, r.exit_status, r.signal, r.stderr_tail);
}

}  // namespace heapscope::harness
