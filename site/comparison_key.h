// The comparison key of a run: the SHA-256 of the compact JSON of everything that decides
// whether two runs' numbers may be compared (harness/docs/protocol.md#site) — workload definitions,
// machine class, allocator versions and options, baseline. Deliberately NOT in the key
// our own commit (a series axis: series.engine_version),
// seeds, calibrated op counts, hostnames, kernel builds and library paths/digests, which change
// on every run or every image update and would give every run its own lineage.
#pragma once

#include <string>

#include "site_json.h"

namespace heapscope::site {

inline constexpr const char* kComparisonKeyMethod = "sha256-of-compact-json-v1";

// {"digest", "method", "components": {"workloads", "machine_class", "allocators", "baseline"}}
Json comparison_key(const Json& raw, const std::string& baseline);

// "0.1.0+9e52be7-dirty" -> "0.1.0": build metadata after '+' names a commit, not a version.
std::string version_without_build(const std::string& version);

}  // namespace heapscope::site
