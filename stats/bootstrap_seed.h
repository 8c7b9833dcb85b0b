// Deterministic bootstrap seeds: the same (campaign seed, cell key) always gives the
// same seed, so the same raw data always gives byte-identical statistics, while
// different cells get unrelated resampling streams.
//
// Definition ("heapscope-bootstrap-seed-v1"):
//   k = FNV-1a-64 of the bytes "heapscope/bootstrap-seed/v1" NUL cell_key
//   seed = splitmix64_mix(splitmix64_mix(campaign_seed ^ 0x9e3779b97f4a7c15) ^ k)
// The cell key is chosen by the caller; by convention
// "<workload>/<threads>/<metric>/<candidate>/<baseline>".
#pragma once

#include <cstdint>
#include <string_view>

namespace heapscope::stats {

inline constexpr const char* kBootstrapSeedMethod = "heapscope-bootstrap-seed-v1";

std::uint64_t bootstrap_seed(std::uint64_t campaign_seed, std::string_view cell_key);

}  // namespace heapscope::stats
