// The header of a new raw run (raw_run.h), the same for `hsbench run` (campaign_setup.h) and
// `hsbench app` (app_campaign.h, which adds "application"): schema, tool, creation time,
// campaign record, seed, baseline, active allocators, child program, block-order method, host,
// allocator provenance, and the empty calibration, orders and samples a run fills in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/campaign/campaign_spec.h"
#include "harness/campaign/raw_run.h"
#include "harness/registry/allocator_registry.h"

namespace heapscope::harness {

// What differs between runs; name the fields at the call (designated initializers).
struct RawRunHeaderFields {
  const CampaignSpec& campaign;  // recorded as campaign_to_json
  std::uint64_t seed;            // also recorded as seed_hex
  const std::string& baseline;
  const std::vector<std::string>& active;        // "active_allocators"
  const std::string& workload_program;           // the program every sample runs
  const std::vector<AllocatorInfo>& allocators;  // every allocator asked for, with provenance
};

Json new_raw_run_header(const RawRunHeaderFields& fields);

// A resumed run records this host too, unless a host of the same name already ran it.
void add_this_host(Json& raw);

// How a raw run writes a seed ("0x" and 16 hex digits) and a time (UTC, ISO 8601 to the second).
std::string hex64(std::uint64_t v);
std::string utc_now();

}  // namespace heapscope::harness
