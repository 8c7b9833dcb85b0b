#include "stats/paired_effect.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>

#include "base/splitmix64.h"
#include "stats/quantile.h"

namespace heapscope::stats {
namespace {

PairedEffect empty_result(const BootstrapConfig& config, std::size_t blocks) {
  PairedEffect r;
  r.blocks = blocks;
  r.effect = r.ci_low = r.ci_high = r.log_se = r.mde_ratio = kNaN;
  r.seed = config.seed;
  r.resamples = config.resamples;
  r.confidence = config.confidence;
  return r;
}

// Type-7 median of a resample given as per-index multiplicities over ascending data:
// walk the cumulative counts to the order statistics at ranks (n-1)/2 and n/2.
// Same arithmetic as quantile_type7_sorted, without sorting the resample.
double median_from_counts(std::span<const double> sorted, std::span<const std::uint32_t> counts) {
  const std::size_t n = sorted.size();
  const std::size_t rank_lo = (n - 1) / 2;
  const std::size_t rank_hi = n / 2;
  double lo = kNaN;
  std::size_t seen = 0;
  for (std::size_t i = 0; i < n; ++i) {
    seen += counts[i];
    if (std::isnan(lo) && seen > rank_lo) lo = sorted[i];
    if (seen > rank_hi) return rank_lo == rank_hi ? lo : lo + 0.5 * (sorted[i] - lo);
  }
  return lo;  // unreachable: counts sum to n
}

double sample_sd(std::span<const double> v) {
  if (v.size() < 2) return kNaN;
  double sum = 0.0;
  for (const double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  double ss = 0.0;
  for (const double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

}  // namespace

std::vector<double> log_effects(std::span<const double> candidate, std::span<const double> baseline,
                                Direction direction, std::string* problem) {
  auto fail = [&](const char* why) {
    if (problem != nullptr) *problem = why;
    return std::vector<double>{};
  };
  if (candidate.size() != baseline.size())
    return fail("candidate and baseline block counts differ");
  std::vector<double> d;
  d.reserve(candidate.size());
  for (std::size_t b = 0; b < candidate.size(); ++b) {
    const double c = candidate[b];
    const double r = baseline[b];
    if (!std::isfinite(c) || !std::isfinite(r) || c <= 0.0 || r <= 0.0)
      return fail("a block value is non-finite or not positive");
    d.push_back(direction == Direction::kHigherIsBetter ? std::log(c / r) : std::log(r / c));
  }
  return d;
}

std::vector<double> bootstrap_medians(std::span<const double> logs, std::uint64_t seed,
                                      std::size_t resamples) {
  std::vector<double> sorted(logs.begin(), logs.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  std::vector<double> out;
  if (n == 0) return out;
  out.reserve(resamples);
  base::SplitMix64 rng(seed);
  std::vector<std::uint32_t> counts(n);
  for (std::size_t r = 0; r < resamples; ++r) {
    std::fill(counts.begin(), counts.end(), 0u);
    for (std::size_t i = 0; i < n; ++i) ++counts[rng.below(n)];
    out.push_back(median_from_counts(sorted, counts));
  }
  return out;
}

PairedEffect paired_effect(std::span<const double> candidate, std::span<const double> baseline,
                           Direction direction, const BootstrapConfig& config) {
  std::string problem;
  const std::vector<double> d = log_effects(candidate, baseline, direction, &problem);
  if (!problem.empty()) {
    PairedEffect r = empty_result(config, candidate.size());
    r.problem = problem;
    return r;
  }
  return paired_effect_from_logs(d, config);
}

PairedEffect paired_effect_from_logs(std::span<const double> logs, const BootstrapConfig& config) {
  PairedEffect r = empty_result(config, logs.size());
  if (logs.empty()) {
    r.problem = "no blocks";
    return r;
  }
  if (!std::all_of(logs.begin(), logs.end(), [](double x) { return std::isfinite(x); })) {
    r.problem = "a log effect is non-finite";
    return r;
  }
  if (!(config.confidence > 0.0 && config.confidence < 1.0) || config.resamples < 2) {
    r.problem = "confidence must be in (0, 1) and resamples >= 2";
    return r;
  }
  r.effect = std::exp(median(logs));
  if (logs.size() < 2) {
    r.note = "1 block: no confidence interval";
    return r;
  }

  std::vector<double> meds = bootstrap_medians(logs, config.seed, config.resamples);
  r.log_se = sample_sd(meds);
  std::sort(meds.begin(), meds.end());
  const double alpha = 1.0 - config.confidence;
  r.ci_low = std::exp(quantile_type7_sorted(meds, alpha / 2));
  r.ci_high = std::exp(quantile_type7_sorted(meds, 1.0 - alpha / 2));
  const boost::math::normal_distribution<double> z;
  const double factor = boost::math::quantile(z, 1.0 - alpha / 2) + boost::math::quantile(z, 0.8);
  r.mde_ratio = std::exp(factor * r.log_se);
  r.ci_valid = true;
  if (logs.size() < kFewBlocks) r.note = "fewer than 10 blocks: the percentile interval is coarse";
  return r;
}

}  // namespace heapscope::stats
