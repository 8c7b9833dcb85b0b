// From a campaign spec to what a run needs: the seed, the child program, the allocators
// (inspected on this host: path, package version, SHA-256, availability), the baseline, and
// the raw-run header that records all of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "allocator_registry.h"
#include "campaign_spec.h"
#include "raw_run.h"

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

// The header of a new raw run: campaign, seed, host, provenance; empty calibration, orders
// and samples.
Json new_raw_run(const ResolvedCampaign& campaign);

// Throws RawRunError when `raw` was made from a different campaign or allocator library.
void check_same_campaign(const Json& raw, const ResolvedCampaign& campaign,
                         const std::string& path);

std::string hex64(std::uint64_t v);

// Shared with `hsbench app` (app_campaign.h): the probe command that re-runs this hsbench,
// a fresh random 64-bit seed, and the current UTC time as recorded in raw runs.
ProbeCommand self_probe();
std::uint64_t fresh_seed();
std::string utc_now();

}  // namespace heapscope::harness
