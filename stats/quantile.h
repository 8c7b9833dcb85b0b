// Type-7 quantiles (Hyndman & Fan 1996, R's default) and the per-cell summary.
//
// Small-n rules: an empty input gives NaN; n == 1 gives that value for every p.
// Any non-finite input makes the result NaN (and Summary::finite false) instead of
// sorting NaNs, which would be undefined.
#pragma once

#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace heapscope::stats {

// What a statistic is when it has no value (empty input, non-finite data).
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// `sorted` must be ascending and finite; p in [0, 1] (clamped).
// h = (n-1)p, lo = floor(h): x[lo] + (h-lo)(x[lo+1]-x[lo]); exactly x[lo] when h is integral.
double quantile_type7_sorted(std::span<const double> sorted, double p);

// Copies, sorts and applies quantile_type7_sorted.
double quantile_type7(std::span<const double> values, double p);

double median(std::span<const double> values);

struct Summary {
  std::size_t n = 0;
  bool finite = true;  // false: some input was NaN/inf, every statistic below is NaN
  double median, q1, q3, iqr, min, max, mean;
  double relative_iqr;  // iqr / median; NaN when median is 0
};

Summary summarize(std::span<const double> values);

}  // namespace heapscope::stats
