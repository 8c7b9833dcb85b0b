// Helpers for the campaign tests: run hsbench, scratch directories, read JSON.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/process/run_command.h"
#include "harness/registry/allocator_registry.h"

// The libc.so.6 this process runs on (the glibc allocator's library).
#define HS_LIBC ::heapscope::harness::libc_path()

namespace heapscope::harness::testing {

inline CommandResult hsbench(const std::vector<std::string>& args, int timeout_ms = 120000) {
  std::vector<std::string> argv{HS_HSBENCH_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, nullptr, timeout_ms);
}

// A fresh directory under the temp dir, removed at scope exit.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("hsbench-" + name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string operator/(const std::string& file) const { return (path_ / file).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_file(path));
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

inline std::set<std::string> sample_ids(const nlohmann::json& raw) {
  std::set<std::string> ids;
  for (const auto& s : raw["samples"]) ids.insert(s["id"].get<std::string>());
  return ids;
}

// The row of `allocator` in the summary's cell (workload, threads), or null.
inline nlohmann::json summary_row(const nlohmann::json& summary, const std::string& workload,
                                  unsigned threads, const std::string& allocator) {
  for (const auto& cell : summary["cells"]) {
    if (cell["workload"] != workload || cell["threads"] != threads) continue;
    for (const auto& row : cell["allocators"]) {
      if (row["allocator"] == allocator) return row;
    }
  }
  return nullptr;
}

}  // namespace heapscope::harness::testing
