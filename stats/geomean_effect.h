// Geometric mean of paired effects over several cases (a suite's headline row), with a
// bootstrap CI that resamples blocks WITHIN each case.
//
// Input: per case the per-block log effects d_{c,b} (paired_effect.h's sign convention: > 0 =
// the candidate is better). Each case's effect is exp(median_b d_{c,b}) as in paired_effect.h;
// the headline is their geometric mean,
//   G = exp( (1/C) * sum_c median_b d_{c,b} ),
// so every case weighs the same whatever its block count or its scale (seconds, requests/s).
//
// CI ("geomean-within-case-block-bootstrap-type7-v1"): resample r draws, for every case
// independently, n_c block indices with replacement (case c's stream is SplitMix64 seeded with
// splitmix64_mix(seed ^ (c + 1) * golden), the same draws as bootstrap_medians), takes the
// type-7 median of the drawn d_{c,b}, and averages over cases; the CI is exp of the type-7
// quantiles at (1-c)/2 and (1+c)/2 of those averages. Cases are fixed, not resampled: the
// interval is about run-to-run noise of THESE programs, not about a population of programs.
//
// A case with no usable block is left out and named in `problem`-free `left_out`; with no case
// left the result is NaN with a problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stats/paired_effect.h"

namespace heapscope::stats {

inline constexpr const char* kGeomeanMethod = "geomean-within-case-block-bootstrap-type7-v1";

struct GeomeanEffect {
  std::size_t cases = 0;  // cases that entered the mean
  double effect;          // NaN when no case entered
  double ci_low;          // NaN unless ci_valid
  double ci_high;
  bool ci_valid = false;
  std::vector<std::size_t> left_out;  // indices of cases without a usable block
  std::string problem;                // non-empty: no result
  std::string note;                   // caveats (a case with fewer than 2 blocks adds no spread)
  std::uint64_t seed = 0;
  std::size_t resamples = 0;
  double confidence = 0.0;
};

// logs[c] = case c's per-block log effects (finite; an empty or non-finite case is left out).
GeomeanEffect geomean_effect(std::span<const std::vector<double>> logs,
                             const BootstrapConfig& config);

}  // namespace heapscope::stats
