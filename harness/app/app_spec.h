// What `hsbench app` was asked to do, and the pieces of a raw run that follow from it alone:
// the workload id ("app:<basename of CMD>"), the child's environment, the campaign record.
//
// Environment: a user program needs some of ours (PATH, HOME, the locale: `sort` orders by
// LC_COLLATE), but a raw run records every child's environment and may be published, so only
// an allow-list is passed on (PATH HOME USER LOGNAME LANG LANGUAGE LC_* TZ TMPDIR TERM), plus
// `--env KEY=VALUE`, plus the allocator's own variables. LD_PRELOAD is never inherited.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/campaign/campaign_spec.h"
#include "harness/registry/allocator_registry.h"

namespace heapscope::harness {

struct AppSpec {
  std::vector<std::string> command;          // CMD ARGS...
  std::vector<std::string> allocators;       // ids; empty = every available allocator
  std::vector<std::string> user_allocators;  // "NAME=PATH"
  std::vector<std::string> extra_env;        // "KEY=VALUE"
  unsigned blocks = 10;
  unsigned warmup = 1;  // runs per allocator before block 0, not recorded as samples
  double timeout_seconds = 300;
  std::string cwd;         // empty = ours; absolute (and set) after validate_app_spec
  std::string stdin_path;  // absolute after validate_app_spec; empty = /dev/null
  bool same_output = false;
  std::string baseline;  // empty: glibc when available
  std::optional<std::uint64_t> seed;
  bool force = false;  // run even when the probe says the comparison is meaningless
};

// Checks and normalizes (absolute cwd and stdin). Throws CampaignError.
void validate_app_spec(AppSpec& spec);

// "app:<basename of CMD>"
std::string app_workload_id(const AppSpec& spec);

// The allow-listed part of our environment plus --env (see above).
std::vector<std::string> app_base_environment(const AppSpec& spec);

// `base` with the allocator's entries (LD_PRELOAD and its own variables) added, replacing any
// entry of the same name.
std::vector<std::string> app_child_environment(const std::vector<std::string>& base,
                                               const std::vector<std::string>& allocator_env);

// The campaign record of a raw run (campaign_to_json shape): name and workload = the id,
// thread point 1, no calibration.
CampaignSpec app_campaign_spec(const AppSpec& spec, std::uint64_t seed,
                               const std::string& baseline);

// {"argv", "executable", "cwd", "stdin", "same_output", "warmup", "env", "probe": probe}
nlohmann::ordered_json application_json(const AppSpec& spec, const std::string& executable,
                                        const std::vector<std::string>& base_env,
                                        const nlohmann::ordered_json& probe);

}  // namespace heapscope::harness
