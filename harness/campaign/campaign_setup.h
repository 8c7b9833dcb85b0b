// From a campaign spec to what a run needs: the seed, the child program, the allocators
// (inspected on this host: path, package version, SHA-256, availability), the baseline, and
// the raw-run header that records all of it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "harness/campaign/campaign_spec.h"
#include "harness/campaign/raw_run.h"
#include "harness/registry/allocator_registry.h"

namespace heapscope::harness {

struct ResolvedCampaign {
  CampaignSpec spec;  // spec.seed is always set here
  std::uint64_t seed = 0;
  std::string program;                    // hs-workload
  std::vector<AllocatorInfo> allocators;  // every allocator asked for, available or not
  std::vector<std::string> active;        // the available ones, in registry order
  std::string baseline;

  const AllocatorInfo* allocator(const std::string& id) const;
};

// Throws CampaignError (unknown workload, no available allocator, bad baseline) or
// RegistryError (unknown allocator id, bad NAME=PATH). Progress notes go to stderr.
ResolvedCampaign resolve_campaign(CampaignSpec spec);

// The header of a new raw run (raw_run_header.h): campaign, seed, host, provenance; empty
// calibration, orders and samples.
Json new_raw_run(const ResolvedCampaign& campaign);

// Throws RawRunError when `raw` was made from a different campaign or allocator library.
void check_same_campaign(const Json& raw, const ResolvedCampaign& campaign,
                         const std::string& path);

// Shared with `hsbench app` (app_campaign.h): the probe command that re-runs this hsbench,
// a fresh random 64-bit seed, and the choice of the baseline: `requested` when given (a
// CampaignError, "... is not an available allocator <scope>", when it is not in `active`),
// else the first of `preferred` in `active`, else the first of `active` ("" when it is empty).
ProbeCommand self_probe();
std::uint64_t fresh_seed();
std::string choose_baseline(const std::string& requested, const std::vector<std::string>& active,
                            std::initializer_list<const char*> preferred, const std::string& scope);

}  // namespace heapscope::harness
