// Running the real profile readers from tests: a scratch folder, `go tool pprof` offline with
// its caches inside that folder, and a parser for `-raw` sample values.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hs_test {

inline bool tool_available(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr
};

// A temporary folder, removed on destruction unless HS_PPROF_KEEP is set.
class ScratchDir {
 public:
  ScratchDir() {
    char pattern[] = "/tmp/hs_pprof_XXXXXX";
    if (mkdtemp(pattern) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    if (path_.empty() || std::getenv("HS_PPROF_KEEP") != nullptr) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

  std::string write(const std::string& name, const void* data, size_t len) const {
    std::string target = file(name);
    std::ofstream(target, std::ios::binary)
        .write(static_cast<const char*>(data), static_cast<std::streamsize>(len));
    return target;
  }

  // Runs `command_line` inside the folder (also its HOME); stdout and stderr together.
  CommandResult run(const std::string& command_line) const {
    std::string command = "cd '" + path_ + "' && HOME='" + path_ + "' " + command_line + " 2>&1";
    CommandResult result;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    char chunk[4096];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, pipe)) > 0;) result.output.append(chunk, n);
    int status = pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }

  // `go tool pprof <args>` offline, with go's caches in the folder.
  CommandResult go_pprof(const std::string& args) const {
    return run("GOCACHE='" + path_ + "/gocache' GOPATH='" + path_ +
               "/gopath' GOFLAGS= GOPROXY=off PPROF_TMPDIR='" + path_ + "' go tool pprof " + args);
  }

 private:
  std::string path_;
};

// The sample values of `go tool pprof -raw`, summed per column. Sample lines look like
// "        385    1579015: 1 2 " (values, a colon, location ids) between "Samples:" (plus
// one line of type names) and "Locations".
inline std::vector<int64_t> raw_totals(const std::string& raw) {
  std::vector<int64_t> totals;
  std::istringstream in(raw);
  bool in_samples = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Samples:", 0) == 0) {
      in_samples = true;
      continue;
    }
    if (line.rfind("Locations", 0) == 0) break;
    size_t colon = line.find(':');
    if (!in_samples || line.empty() || line[0] != ' ' || colon == std::string::npos) continue;
    std::string values = line.substr(0, colon);
    if (values.find_first_not_of(" -0123456789") != std::string::npos) continue;  // a label
    std::istringstream columns(values);
    size_t column = 0;
    for (int64_t v; columns >> v; ++column) {
      if (totals.size() <= column) totals.resize(column + 1);
      totals[column] += v;
    }
  }
  return totals;
}

}  // namespace hs_test
