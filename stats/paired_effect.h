// Paired effect of a candidate allocator against a baseline over blocks.
//
// Direction: blocks are paired by index (block b of `candidate` ran in the same block,
// with the same stream, as block b of `baseline`). The per-block log effect is
//   d_b = ln(candidate_b / baseline_b)   for higher-is-better metrics (throughput),
//   d_b = ln(baseline_b / candidate_b)   for lower-is-better metrics (RSS, latency),
// so an effect > 1 ALWAYS means "the candidate is better", e.g. 1.10 = 10% better.
//
// Point estimate: exp(type-7 median of d_b) (the median per-block ratio, not a ratio
// of medians). CI: whole-block percentile bootstrap ("percentile-block-bootstrap-
// type7-v1"): each resample draws n block indices with replacement (splitmix64,
// Lemire rejection), takes the type-7 median of their d_b; the CI is exp of the
// type-7 quantiles at (1-c)/2 and (1+c)/2 of the sorted resample medians.
//
// Minimum detectable effect ("normal-approx-bootstrap-se-v1"): with se the standard
// deviation of the resample medians (log scale),
//   mde_ratio = exp((z_{(1+c)/2} + z_{0.80}) * se)
// i.e. the smallest true ratio that this cell's noise would flag (CI excluding 1)
// with about 80% power; 1/mde_ratio for the other direction. For c = 0.95 the factor
// is 2.8016.
//
// Coverage (measured, tests/bootstrap_coverage_test.cc): the percentile bootstrap of a
// median undercovers at small block counts, because resample medians only take
// order-statistic values: 92.5% at 15 blocks, 93.9% at 20, 94.0% at 30 (A/A, nominal 95%).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace heapscope::stats {

enum class Direction { kHigherIsBetter, kLowerIsBetter };

struct BootstrapConfig {
  std::uint64_t seed = 0;  // derive with bootstrap_seed(campaign seed, cell key)
  std::size_t resamples = 10'000;
  double confidence = 0.95;
};

struct PairedEffect {
  std::size_t blocks = 0;
  double effect;  // exp(median d_b); NaN when there is no valid block
  double ci_low;  // NaN unless ci_valid
  double ci_high;
  double log_se;     // bootstrap standard error of the median log effect
  double mde_ratio;  // >= 1; NaN unless ci_valid
  bool ci_valid = false;
  std::string problem;  // empty when the input was usable; else why (the result is NaN)
  std::string note;     // caveats that do not invalidate the result (e.g. few blocks)
  std::uint64_t seed = 0;
  std::size_t resamples = 0;
  double confidence = 0.0;
};

inline constexpr const char* kPairedEffectMethod = "percentile-block-bootstrap-type7-v1";
inline constexpr const char* kMdeMethod = "normal-approx-bootstrap-se-v1";
// Below this many blocks the percentile interval is marked as coarse in `note`.
inline constexpr std::size_t kFewBlocks = 10;

// d_b as defined above. Values must be finite and > 0; otherwise returns empty and
// sets *problem (when non-null). Sizes must match.
std::vector<double> log_effects(std::span<const double> candidate, std::span<const double> baseline,
                                Direction direction, std::string* problem);

PairedEffect paired_effect(std::span<const double> candidate, std::span<const double> baseline,
                           Direction direction, const BootstrapConfig& config);

PairedEffect paired_effect_from_logs(std::span<const double> log_effects,
                                     const BootstrapConfig& config);

// The resample medians (log scale, in draw order); exposed for tests.
std::vector<double> bootstrap_medians(std::span<const double> log_effects, std::uint64_t seed,
                                      std::size_t resamples);

}  // namespace heapscope::stats
