// Helpers for the profiler's behavioural tests (accuracy, contract, concurrency, child
// processes, and prof_child.cc, the child program they run): stats snapshots, visit sums, a
// counting writer, environment guards and a child process runner. Everything goes through the
// public API (heapscope/profile.h).
#pragma once

#include <fcntl.h>
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace hs_prof_test {

// A zeroed stats struct with size and version set (HS_PROF_STATS_INIT leaves the other
// members to the compiler, which -Wmissing-field-initializers reports in C++).
inline hs_prof_stats_t blank_stats() {
  hs_prof_stats_t s;
  std::memset(&s, 0, sizeof s);
  s.size = sizeof s;
  s.version = HS_PROF_STATS_VERSION;
  return s;
}

// Stats of the built-in profiler (aborts if the API refuses a well-formed struct).
inline hs_prof_stats_t prof_stats() {
  hs_prof_stats_t s = blank_stats();
  if (!hs_prof_stats_get(&s)) std::abort();
  return s;
}

// Sums over every stack of a visit (or a snapshot visit).
struct VisitSums {
  uint64_t stacks = 0;
  uint64_t live_objects = 0;
  uint64_t live_bytes = 0;
  uint64_t accum_objects = 0;
  uint64_t accum_bytes = 0;
  double live_bytes_estimate = 0;
  size_t max_depth = 0;
  size_t min_depth = SIZE_MAX;
  bool consistent = true;  // live_objects == 0 || live_bytes > 0, depth in range
  std::vector<std::pair<uint64_t, uint64_t>> per_stack;  // (live objects, live bytes)

  static bool add(const hs_prof_sample_info_t* info, void* arg) {
    auto* sums = static_cast<VisitSums*>(arg);
    sums->stacks++;
    sums->live_objects += info->live_objects;
    sums->live_bytes += info->live_bytes;
    sums->accum_objects += info->accum_objects;
    sums->accum_bytes += info->accum_bytes;
    sums->live_bytes_estimate += info->live_bytes_estimate;
    sums->max_depth = std::max(sums->max_depth, info->depth);
    sums->min_depth = std::min(sums->min_depth, info->depth);
    if ((info->live_objects != 0 && info->live_bytes == 0) || info->depth == 0 ||
        info->depth > HS_PROF_MAX_STACK_DEPTH || info->stack == nullptr) {
      sums->consistent = false;
    }
    sums->per_stack.emplace_back(info->live_objects, info->live_bytes);
    return true;
  }
  void sort() { std::sort(per_stack.begin(), per_stack.end()); }
};

inline VisitSums visit_now() {
  VisitSums sums;
  if (!hs_prof_visit(VisitSums::add, &sums)) sums.consistent = false;
  sums.sort();
  return sums;
}

// A writer that appends everything to a std::string (the dump may call it several times).
inline bool append_writer(void* arg, const void* data, size_t len) {
  static_cast<std::string*>(arg)->append(static_cast<const char*>(data), len);
  return true;
}

inline std::string dump_text() {
  std::string out;
  if (!hs_prof_dump_writer(append_writer, &out)) return std::string();
  return out;
}

// Non-comment sample lines (`N: B [N: B] @ 0x...`) of a text heap_v2 profile.
inline size_t text_sample_lines(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  size_t count = 0;
  bool first = true;
  while (std::getline(in, line)) {
    if (first) {
      first = false;
      continue;  // the header
    }
    if (line == "MAPPED_LIBRARIES:") break;
    if (line.empty() || line[0] == '#') continue;
    if (line.find("] @") != std::string::npos) ++count;
  }
  return count;
}

inline std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The four counts of a heap_v2 header: live objects, live bytes, accum objects, accum bytes
// (all UINT64_MAX if the header does not parse).
struct HeaderCounts {
  uint64_t objects = UINT64_MAX, bytes = UINT64_MAX, accum_objects = UINT64_MAX,
           accum_bytes = UINT64_MAX;
};
inline HeaderCounts header_counts(const std::string& text) {
  HeaderCounts c;
  unsigned long long v[4];
  if (std::sscanf(first_line(text).c_str(), "heap profile: %llu: %llu [ %llu: %llu]", &v[0], &v[1],
                  &v[2], &v[3]) == 4) {
    c = HeaderCounts{v[0], v[1], v[2], v[3]};
  }
  return c;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline bool file_exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Sets (or unsets, value == nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      had_old_ = true;
      old_ = old;
    }
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_old_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  bool had_old_ = false;
  std::string old_;
};

// A private directory under TMPDIR (or /tmp), removed with its files at scope exit.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/hs_prof_behaviour.XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) == nullptr) std::abort();
    path_ = buffer.data();
  }
  ~TempDir() {
    std::string command = "rm -rf '" + path_ + "'";
    if (std::system(command.c_str()) != 0) {
      // best effort
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct ChildResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;     // stdout
};

// Runs `program args...` with the current environment minus every HEAPSCOPE_PROF* variable,
// plus `env` ("NAME=value" entries); collects stdout.
inline ChildResult run_child(const std::string& program, const std::vector<std::string>& args,
                             const std::vector<std::string>& env) {
  std::vector<std::string> environment;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "HEAPSCOPE_PROF", 14) != 0) environment.emplace_back(*e);
  }
  for (const std::string& e : env) environment.push_back(e);
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);

  ChildResult result;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return result;
  pid_t pid = fork();
  if (pid < 0) return result;
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    execve(program.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  char buffer[4096];
  for (;;) {
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.out.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

// The `KEY value` lines a child prints, as a map (the last value of a key wins) plus, for
// keys repeated on purpose, every line in order.
struct ChildReport {
  std::map<std::string, std::string> values;
  std::vector<std::string> lines;
  explicit ChildReport(const std::string& out) {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      lines.push_back(line);
      size_t space = line.find(' ');
      if (space == std::string::npos) continue;
      values[line.substr(0, space)] = line.substr(space + 1);
    }
  }
  uint64_t u64(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? UINT64_MAX : std::strtoull(it->second.c_str(), nullptr, 10);
  }
  std::vector<std::string> with_prefix(const std::string& prefix) const {
    std::vector<std::string> out;
    for (const std::string& line : lines) {
      if (line.compare(0, prefix.size(), prefix) == 0) out.push_back(line);
    }
    return out;
  }
};

}  // namespace hs_prof_test
