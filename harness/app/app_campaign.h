// `hsbench app` as a campaign: one cell ("app:<name>", thread point 1), the selected allocators
// in balanced randomized paired blocks (block_order.h), the preload probe first, warmup runs,
// then one sample per (block, allocator) (app_sample_runner.h), and with --same-output a final
// pass that turns every sample whose stdout differs from the baseline's into a failure of kind
// output-differs (its measurement kept, never averaged).
//
// Raw run: the "heapscope.raw-run" v1 shape of raw_run.h (campaign record, seed, hosts,
// allocator provenance, empty calibration, orders, samples with exact argv and env) plus
//   "application": {"argv", "executable", "cwd", "stdin", "same_output", "warmup", "env",
//                   "probe": app_probe_to_json, "warmups": [...], "output_check": {...}}
// and per sample "measurement": {wall_seconds, user_seconds, system_seconds, peak_rss_bytes,
// peak_rss_tree_bytes, exit_status, stdout_sha256}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/app/app_probe.h"
#include "harness/app/app_spec.h"
#include "harness/campaign/campaign_exec.h"
#include "harness/campaign/raw_run.h"
#include "harness/registry/allocator_registry.h"

namespace heapscope::harness {

struct AppCampaign {
  AppSpec spec;
  std::uint64_t seed = 0;
  std::string workload;  // app:<name>
  std::string executable;
  std::vector<std::string> base_env;
  std::vector<AllocatorInfo> allocators;  // every allocator asked for, as inspected
  std::vector<std::string> active;        // available and proven by the probe, registry order
  std::string baseline;
  AppProbeReport probe;

  const AllocatorInfo* allocator(const std::string& id) const;
};

// The allocators asked for (ids, empty = the default set; user NAME=PATH additions), each
// inspected; an unavailable one is reported on stderr as "hsbench <command>: ...".
std::vector<AllocatorInfo> inspect_selected_allocators(const std::vector<std::string>& ids,
                                                       const std::vector<std::string>& user,
                                                       const std::string& command);

// Resolves the command, inspects the allocators and runs the probe (progress on stderr).
// Throws CampaignError (no command, unknown baseline, ...) or RegistryError. An allocator the
// probe rejects is marked unavailable with the probe's reason. Check probe.blocked afterwards.
// SIGINT/SIGTERM stop the probe run in flight (its process group is killed) and the probing:
// the caller checks app_interrupt_requested() afterwards.
AppCampaign prepare_app_campaign(AppSpec spec);

Json new_app_raw_run(const AppCampaign& campaign);

struct AppExecResult {
  std::size_t ran = 0;
  std::size_t failed = 0;
  bool interrupted = false;
};

// Warmups, orders, samples, output check; saves through `writer`. SIGINT/SIGTERM stop it.
AppExecResult run_app_campaign(const AppCampaign& campaign, Json& raw, RawRunWriter& writer);

// --same-output: samples whose stdout digest differs from the expected output (the
// baseline's most common digest) become failures of kind output-differs. Records
// application.output_check.
void check_same_output(Json& raw, const std::string& baseline);

}  // namespace heapscope::harness
