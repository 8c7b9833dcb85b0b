#include "harness/campaign/sample_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "harness/campaign/memory_sampler.h"
#include "harness/process/spawn.h"

namespace heapscope::harness {
namespace {

const volatile std::sig_atomic_t* g_stop_flag = nullptr;

bool stop_requested() { return g_stop_flag != nullptr && *g_stop_flag != 0; }

constexpr int kChildBadArguments = 2;
constexpr int kChildWrongAllocator = 3;
constexpr int kChildWorkloadErrors = 4;
constexpr int kChildMemoryProtocol = 5;
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

bool wants_latency(const std::vector<std::string>& argv) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--latency-rate") return true;
  }
  return false;
}

// Why a printed measurement cannot be used, or "".
std::string measurement_problem(const nlohmann::ordered_json& m, bool latency) {
  if (!m.is_object()) return "the child printed no JSON object";
  const auto rate = m.find("ops_per_sec");
  if (rate == m.end() || !rate->is_number() || !std::isfinite(rate->get<double>()) ||
      rate->get<double>() <= 0) {
    return "ops_per_sec missing or not a positive number";
  }
  const auto digest = m.find("stream_digest");
  if (digest == m.end() || !digest->is_string()) return "stream_digest missing";
  if (!m.contains("peak_rss_bytes")) return "peak_rss_bytes missing";
  if (latency) {
    const auto lat = m.find("latency");
    if (lat == m.end() || !lat->is_object() || lat->value("count", 0) == 0 ||
        !lat->contains("p999_ns"))
      return "latency was asked for but the child printed no latency record";
  }
  return "";
}

bool wants_memory(const std::vector<std::string>& argv) {
  for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
    if (argv[i] == "--memory-fd" && argv[i + 1] == std::to_string(kMemoryFd)) return true;
  }
  return false;
}

// clang-tidy: nlohmann's noexcept null constructor delegates to the value-kind constructor,
// which can throw only for kinds other than null.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct ChildRun {
  bool started = false;
  bool timed_out = false;
  bool interrupted = false;  // a stop request killed it
  int exit_code = -1;
  int term_signal = 0;
  std::string out, err, error;
  nlohmann::ordered_json memory;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Spawns argv with stdout/stderr captured and, for the memory protocol, a socket as fd 3;
// drains the pipes and drives the sampler until both pipes close or the watchdog fires.
ChildRun run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   int timeout_ms, bool memory, const std::vector<double>& return_points) {
  ChildRun run;
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, control[2] = {-1, -1};
  auto fail = [&](const char* what) {
    run.error = std::string(what) + ": " + std::strerror(errno);
    for (int* fd :
         {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1], &control[0], &control[1]})
      close_fd(*fd);
    return run;
  };
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return fail("pipe");
  if (memory) {
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) != 0) return fail("socketpair");
    // The child's end must not already be fd 3 (see SpawnRequest::pass_fd).
    const int high = fcntl(control[1], F_DUPFD_CLOEXEC, 10);
    if (high < 0) return fail("fcntl");
    close_fd(control[1]);
    control[1] = high;
  }
  SpawnRequest request;
  request.program = argv[0];
  request.search_path = true;
  request.argv = argv;
  request.env = &env;
  request.stdout_fd = out_pipe[1];
  request.stderr_fd = err_pipe[1];
  request.pass_fd = control[1];
  request.pass_fd_as = kMemoryFd;
  request.own_process_group = true;
  const pid_t pid = spawn_process(request, &run.error);
  close_fd(out_pipe[1]);
  close_fd(err_pipe[1]);
  close_fd(control[1]);
  if (pid < 0) {
    close_fd(out_pipe[0]);
    close_fd(err_pipe[0]);
    close_fd(control[0]);
    return run;
  }
  run.started = true;
  std::optional<MemorySampler> sampler;
  if (memory) sampler.emplace(pid, control[0], return_points);

  // SIGINT and SIGTERM stay blocked except inside ppoll: a stop request that arrives after the
  // flag check is held until the wait starts and then ends it (EINTR), where with plain poll it
  // would be missed until the sample's timeout. Blocked only after the spawn, so the child does
  // not inherit the mask.
  sigset_t stop_signals, unblocked;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &unblocked);

  pollfd fds[3] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {control[0], POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &run.err};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (stop_requested()) {
      run.interrupted = true;
      break;
    }
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
            .count();
    if (left <= 0) {
      run.timed_out = true;
      break;
    }
    int wait_ms = static_cast<int>(left);
    if (sampler) {
      const int due = sampler->next_wake_ms();
      if (due >= 0) wait_ms = std::min(wait_ms, due);
      if (sampler->control_closed()) fds[2].fd = -1;
    }
    const timespec wait{wait_ms / 1000, static_cast<long>(wait_ms % 1000) * 1'000'000};
    const int ready = ppoll(fds, 3, &wait, &unblocked);
    // A signal interrupts ppoll (never restarted): a stop request ends the child now.
    if (stop_requested()) {
      run.interrupted = true;
      break;
    }
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close_fd(fds[i].fd);
      }
    }
    if (sampler) sampler->wake(ready > 0 && fds[2].fd >= 0 && fds[2].revents != 0);
  }
  pthread_sigmask(SIG_SETMASK, &unblocked, nullptr);
  close_fd(fds[0].fd);
  close_fd(fds[1].fd);
  if (run.timed_out || run.interrupted) kill_process_group(pid);
  const int status = wait_for_exit(pid);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.term_signal = WTERMSIG(status);
  if (sampler) run.memory = sampler->to_json();
  close_fd(control[0]);
  return run;
}

}  // namespace

void watch_stop_flag(const volatile std::sig_atomic_t* flag) { g_stop_flag = flag; }

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
  if (r.latency_rate) {
    argv.emplace_back("--latency-rate");
    argv.emplace_back(std::to_string(*r.latency_rate));
  }
  if (r.memory) {
    argv.emplace_back("--memory-fd");
    argv.emplace_back(std::to_string(kMemoryFd));
  }
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
                         double timeout_seconds, const std::vector<double>& return_points) {
  SampleOutcome o;
  const auto start = std::chrono::steady_clock::now();
  const bool memory = wants_memory(argv);
  const ChildRun r = run_child(argv, env, static_cast<int>(std::ceil(timeout_seconds * 1000.0)),
                               memory, return_points);
  o.memory = r.memory;
  o.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  o.exit_code = r.exit_code;
  o.signal = r.term_signal;
  o.stderr_tail = tail(r.err, kStderrTail);
  o.measurement = parse_last_line(r.out);

  if (!r.started) {
    o.kind = "spawn-failed";
    o.reason = r.error;
  } else if (r.interrupted) {
    o.kind = "interrupted";
    o.reason = "stopped by SIGINT/SIGTERM; child killed";
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
  } else if (r.exit_code == kChildMemoryProtocol) {
    o.kind = "memory-protocol";
    o.reason = first_line(r.err);
  } else if (r.exit_code != 0) {
    o.kind = "exit-status";
    o.reason = "child exited with status " + std::to_string(r.exit_code) + ": " + first_line(r.err);
  } else if (const std::string problem = measurement_problem(o.measurement, wants_latency(argv));
             !problem.empty()) {
    o.kind = "bad-output";
    o.reason = problem;
  } else if (memory && !r.memory.value("complete", false)) {
    o.kind = "memory-protocol";
    o.reason = "the memory handshake did not complete" +
               (r.memory.contains("problem") ? ": " + r.memory["problem"].get<std::string>()
                                             : std::string());
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
