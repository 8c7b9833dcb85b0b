#include "stats/geomean_effect.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/splitmix64.h"
#include "stats/quantile.h"

namespace heapscope::stats {

GeomeanEffect geomean_effect(std::span<const std::vector<double>> logs,
                             const BootstrapConfig& config) {
  GeomeanEffect r;
  r.effect = r.ci_low = r.ci_high = std::numeric_limits<double>::quiet_NaN();
  r.seed = config.seed;
  r.resamples = config.resamples;
  r.confidence = config.confidence;
  if (!(config.confidence > 0.0 && config.confidence < 1.0) || config.resamples < 2) {
    r.problem = "confidence must be in (0, 1) and resamples >= 2";
    return r;
  }
  std::vector<double> sums(config.resamples, 0.0);
  double point = 0.0;
  bool spread = true;
  for (std::size_t c = 0; c < logs.size(); ++c) {
    const std::vector<double>& d = logs[c];
    if (d.empty() || !std::all_of(d.begin(), d.end(), [](double x) { return std::isfinite(x); })) {
      r.left_out.push_back(c);
      continue;
    }
    ++r.cases;
    point += median(d);
    spread &= d.size() >= 2;
    // Each case its own stream, so adding a case never changes another case's draws.
    const std::uint64_t case_seed = base::splitmix64_mix(config.seed ^ ((c + 1) * base::kGolden));
    const std::vector<double> meds = bootstrap_medians(d, case_seed, config.resamples);
    for (std::size_t i = 0; i < meds.size(); ++i) sums[i] += meds[i];
  }
  if (r.cases == 0) {
    r.problem = "no case has a usable block";
    return r;
  }
  const auto n = static_cast<double>(r.cases);
  r.effect = std::exp(point / n);
  for (double& s : sums) s /= n;
  std::sort(sums.begin(), sums.end());
  const double alpha = 1.0 - config.confidence;
  r.ci_low = std::exp(quantile_type7_sorted(sums, alpha / 2));
  r.ci_high = std::exp(quantile_type7_sorted(sums, 1.0 - alpha / 2));
  r.ci_valid = true;
  if (!spread) r.note = "a case has fewer than 2 blocks: it adds no spread to the interval";
  return r;
}

}  // namespace heapscope::stats
