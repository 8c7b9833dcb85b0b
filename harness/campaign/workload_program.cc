#include "harness/campaign/workload_program.h"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/process/run_command.h"

#ifndef HS_WORKLOAD_EXE
#define HS_WORKLOAD_EXE ""
#endif

namespace heapscope::harness {

std::string find_workload_program() {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("HEAPSCOPE_WORKLOAD_EXE"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  }
  const fs::path self = fs::canonical("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(self.parent_path() / "hs-workload");
    candidates.push_back(self.parent_path().parent_path() / "workloads" / "hs-workload");
  }
  candidates.emplace_back(HS_WORKLOAD_EXE);
  for (const fs::path& p : candidates) {
    if (!p.empty() && fs::is_regular_file(p, ec)) return fs::canonical(p, ec).string();
  }
  return "";
}

std::vector<std::string> list_workloads(const std::string& program) {
  const CommandResult r = run_command({program, "--list"}, nullptr, 10000);
  if (!r.ok()) throw std::runtime_error(program + " --list failed: " + r.err);
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (!j.is_array()) throw std::runtime_error(program + " --list printed no JSON array");
  std::vector<std::string> names;
  for (const auto& row : j) names.push_back(row.value("name", ""));
  return names;
}

}  // namespace heapscope::harness
