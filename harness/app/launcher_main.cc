// hs-launch: the process `hsbench app` starts each command through, so that the command's
// peak resident set is its own. A child's ru_maxrss starts from the image it was before exec
// (fork copies the parent; posix_spawn's vfork child borrows it), so a command spawned straight
// from hsbench read hsbench's ~9 MiB however small it was. This launcher is statically linked
// and calls nothing that allocates: the image a command inherits is a few hundred KiB, below
// any dynamically linked program's own. Being static, it also ignores LD_PRELOAD, which the
// environment carries on to the command.
//
// usage: hs-launch REPORT_FD PROGRAM ARGV0 [ARGS...]
// Forks, execs PROGRAM with argv ARGV0 ARGS... (the environment as given), waits for it and
// writes one line to REPORT_FD (a file the caller reads afterwards; close-on-exec here):
//   exec_errno=E                                    exec failed with errno E (exit status 127)
//   status=S wall_ns=W maxrss_kib=M user_us=U sys_us=Y
//       wait4's status, the fork-to-reap time, and the command's ru_maxrss and CPU times (the
//       processes it reaped included), without the launcher's own
// then ends as the command did: the same exit status, or the same signal raised on itself
// (with core dumps off, so a crashing command leaves one core at most, its own).
// Written against POSIX only: no C++ library, no allocation.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace {

long long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1'000'000'000LL + t.tv_nsec;
}

long long microseconds(const timeval& t) {
  return static_cast<long long>(t.tv_sec) * 1'000'000LL + t.tv_usec;
}

void write_all(int fd, const char* text, std::size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, text, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}

[[noreturn]] void end_as(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, nullptr);
    raise(sig);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace

int main(int argc, char** argv) {
  char* end = nullptr;
  const long report_fd = argc >= 4 ? std::strtol(argv[1], &end, 10) : -1;
  if (argc < 4 || end == argv[1] || *end != '\0' || report_fd < 3 ||
      fcntl(static_cast<int>(report_fd), F_SETFD, FD_CLOEXEC) != 0) {
    static const char kUsage[] = "usage: hs-launch REPORT_FD PROGRAM ARGV0 [ARGS...]\n";
    write_all(STDERR_FILENO, kUsage, sizeof kUsage - 1);
    return 2;
  }
  const int report = static_cast<int>(report_fd);
  // exec's errno comes back through this pipe; a successful exec closes it empty.
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) return 126;

  const long long start = now_ns();
  const pid_t child = fork();
  if (child < 0) return 126;
  if (child == 0) {
    execv(argv[2], argv + 3);
    const int e = errno;
    write_all(exec_pipe[1], reinterpret_cast<const char*>(&e), sizeof e);
    _exit(127);
  }
  close(exec_pipe[1]);
  int exec_errno = 0;
  ssize_t got = 0;
  do {
    got = read(exec_pipe[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  close(exec_pipe[0]);

  int status = 0;
  rusage usage{};
  while (wait4(child, &status, 0, &usage) < 0) {
    if (errno != EINTR) return 126;
  }
  const long long wall_ns = now_ns() - start;

  char line[192];
  const int n =
      got == static_cast<ssize_t>(sizeof exec_errno)
          ? std::snprintf(line, sizeof line, "exec_errno=%d\n", exec_errno)
          : std::snprintf(line, sizeof line,
                          "status=%d wall_ns=%lld maxrss_kib=%ld user_us=%lld sys_us=%lld\n",
                          status, wall_ns, usage.ru_maxrss, microseconds(usage.ru_utime),
                          microseconds(usage.ru_stime));
  if (n > 0) write_all(report, line, static_cast<std::size_t>(n));
  end_as(status);
}
