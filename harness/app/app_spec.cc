#include "harness/app/app_spec.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace heapscope::harness {
namespace {

bool allowed_variable(const std::string& name) {
  static const char* const kNames[] = {"PATH",     "HOME", "USER",   "LOGNAME", "LANG",
                                       "LANGUAGE", "TZ",   "TMPDIR", "TERM"};
  if (name.rfind("LC_", 0) == 0) return true;
  return std::any_of(std::begin(kNames), std::end(kNames),
                     [&](const char* n) { return name == n; });
}

std::string name_of(const std::string& entry) { return entry.substr(0, entry.find('=')); }

void set_entry(std::vector<std::string>& env, const std::string& entry) {
  const std::string name = name_of(entry);
  std::erase_if(env, [&](const std::string& e) { return name_of(e) == name; });
  env.push_back(entry);
}

}  // namespace

void validate_app_spec(AppSpec& spec) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (spec.command.empty() || spec.command[0].empty()) {
    throw CampaignError("no command given: hsbench app [options] -- CMD ARGS...");
  }
  if (spec.blocks == 0) throw CampaignError("--blocks must be at least 1");
  if (!(spec.timeout_seconds > 0)) throw CampaignError("--timeout must be > 0");
  // Recorded either way, so `hsbench reproduce` runs the command where it ran.
  if (spec.cwd.empty()) spec.cwd = fs::current_path(ec).string();
  if (!fs::is_directory(spec.cwd, ec)) throw CampaignError("--cwd: no such directory: " + spec.cwd);
  spec.cwd = fs::canonical(spec.cwd, ec).string();
  if (!spec.stdin_path.empty()) {
    if (access(spec.stdin_path.c_str(), R_OK) != 0) {
      throw CampaignError("--stdin: cannot read " + spec.stdin_path);
    }
    spec.stdin_path = fs::absolute(spec.stdin_path, ec).string();
  }
  for (const std::string& e : spec.extra_env) {
    if (e.find('=') == std::string::npos || e.front() == '=') {
      throw CampaignError("--env expects KEY=VALUE, got '" + e + "'");
    }
    if (name_of(e) == "LD_PRELOAD") {
      throw CampaignError("--env LD_PRELOAD is not allowed: the allocator under test sets it");
    }
  }
}

std::string app_workload_id(const AppSpec& spec) {
  return "app:" + std::filesystem::path(spec.command.at(0)).filename().string();
}

std::vector<std::string> app_base_environment(const AppSpec& spec) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (allowed_variable(name_of(entry))) env.push_back(entry);
  }
  if (std::none_of(env.begin(), env.end(), [](const auto& e) { return name_of(e) == "PATH"; })) {
    env.emplace_back("PATH=/usr/bin:/bin");
  }
  for (const std::string& e : spec.extra_env) set_entry(env, e);
  std::sort(env.begin(), env.end());  // a stable record, whatever order our environment had
  return env;
}

std::vector<std::string> app_child_environment(const std::vector<std::string>& base,
                                               const std::vector<std::string>& allocator_env) {
  std::vector<std::string> env = base;
  for (const std::string& e : allocator_env) set_entry(env, e);
  engine_subsystems_off_unless_set(env);
  return env;
}

CampaignSpec app_campaign_spec(const AppSpec& spec, std::uint64_t seed,
                               const std::string& baseline) {
  CampaignSpec c;
  c.name = app_workload_id(spec);
  c.workloads = {c.name};
  c.threads = {1};
  c.allocators = spec.allocators;
  c.user_allocators = spec.user_allocators;
  c.blocks = spec.blocks;
  c.seed = seed;
  c.baseline = baseline;
  c.timeout_seconds = spec.timeout_seconds;
  return c;
}

nlohmann::ordered_json application_json(const AppSpec& spec, const std::string& executable,
                                        const std::vector<std::string>& base_env,
                                        const nlohmann::ordered_json& probe) {
  return {{"argv", spec.command},
          {"executable", executable},
          {"cwd", spec.cwd},
          {"stdin", spec.stdin_path},
          {"same_output", spec.same_output},
          {"warmup", spec.warmup},
          {"env", base_env},
          {"probe", probe}};
}

}  // namespace heapscope::harness
