// `hsbench suite` as a campaign: every selected case of a suite (suite_spec.h) under every
// allocator, in balanced randomized paired blocks per case (block_order.h), executed block-major
// across cases (block 0 of every case, then block 1, ...) so slow drift of the machine hits all
// cases alike. Before any sample: the case's inputs are generated from the input seed into its
// work directory (digests recorded), the preload probe (app_probe.h) runs the whole case
// (setup, command, teardown) once per allocator with the tracing shim, and warmup runs follow.
//
// A case's status: "ok" (measured), "unavailable" (a required program is not installed),
// "not-comparable" (the probe found the preload cannot reach the program, or the case's
// baseline is not served; the reason is recorded), "failed" (every warmup run failed; the
// first failure is the reason). Only ok cases get samples; the suite goes on either way.
//
// Raw run: the "heapscope.raw-run" header (raw_run_header.h; campaign name "suite:<name>",
// workloads = the case names, thread point 1) plus
//   "suite": {"name", "file", "source": the suite file, "input_seed", "quick", "work_dir",
//             "blocks", "warmup",
//             "cases": [{"name", "status", "reason", "baseline", "baseline_reason",
//                        "in_geomean", "metric": {kind, unit, direction}, "rss",
//                        "active": [ids], "env": plain env, "inputs": [{file, sha256, bytes}],
//                        "probe": app_probe_to_json, "warmups": [...], "note"}]}
// and per sample (workload = case name) "measurement": app_measurement_json + {"metric",
// "server_peak_rss_bytes", "rss_bytes", "port"}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/campaign/campaign_exec.h"
#include "harness/campaign/raw_run.h"
#include "harness/registry/allocator_registry.h"
#include "harness/suite/suite_case_runner.h"
#include "harness/suite/suite_spec.h"

namespace heapscope::harness {

struct SuiteOptions {
  std::string suite;                         // NAME or FILE
  std::vector<std::string> allocators;       // empty = every available one
  std::vector<std::string> user_allocators;  // NAME=PATH
  std::vector<std::string> cases;            // empty = all (or the quick ones)
  unsigned blocks = 0;                       // 0 = the suite's (quick: its quick blocks)
  std::optional<unsigned> warmup;
  bool quick = false;
  std::optional<std::uint64_t> seed;
  std::optional<std::uint64_t> input_seed;
  std::string baseline;  // empty = the suite's
  std::string work_dir;  // where inputs are generated; required
};

struct SuiteCaseState {
  std::size_t index = 0;  // into spec.cases
  std::string status = "ok";
  std::string reason;
  std::string baseline;
  std::vector<std::string> active;
  std::vector<std::string> plain_env;
};

struct SuiteCampaign {
  SuiteSpec spec;
  std::uint64_t seed = 0;
  std::uint64_t input_seed = 0;
  unsigned blocks = 0;
  unsigned warmup = 0;
  bool quick = false;
  std::string baseline;
  std::string work_dir;
  std::vector<AllocatorInfo> allocators;
  std::vector<std::string> active;  // allocators active in at least one case
  std::vector<SuiteCaseState> cases;

  const AllocatorInfo* allocator(const std::string& id) const;
  const SuiteCase& case_of(const SuiteCaseState& s) const { return spec.cases[s.index]; }
};

// Loads the suite, inspects the allocators, generates inputs, probes every case and records it
// all in `raw` (a new raw run). Progress on stderr. Throws CampaignError for bad options.
SuiteCampaign prepare_suite(const SuiteOptions& options, Json& raw);

// The campaign of a raw run written by prepare_suite, for --resume: its recorded suite, seeds,
// case statuses and probe verdicts; inputs regenerated when the work directory lacks them (and
// checked against the recorded digests; only `only_case`'s when given). Throws RawRunError.
SuiteCampaign resume_suite(const Json& raw, const std::vector<std::string>& user_allocators,
                           const std::string& only_case = "");

// Generates the case's inputs in its work directory; checks them against `expected` (a recorded
// "inputs" array) when given. Returns the inputs record; throws CampaignError on a failure.
Json generate_inputs(const SuiteCampaign& c, const SuiteCaseState& s, const Json* expected);

// The request that runs a case once under `allocator_env` (a whole environment).
CaseRunRequest case_request(const SuiteCampaign& c, const SuiteCaseState& s,
                            std::vector<std::string> allocator_env);

// The environment of the case's steps under allocator `id`.
std::vector<std::string> case_allocator_env(const SuiteCampaign& c, const SuiteCaseState& s,
                                            const std::string& id);

// Warmups (new runs only), orders, then every sample the raw run lacks; saves through `writer`.
ExecuteResult run_suite(const SuiteCampaign& c, Json& raw, RawRunWriter& writer);

}  // namespace heapscope::harness
