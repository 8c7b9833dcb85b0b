#include "stats/quantile.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace heapscope::stats {
namespace {

bool all_finite(std::span<const double> v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

}  // namespace

double quantile_type7_sorted(std::span<const double> sorted, double p) {
  const std::size_t n = sorted.size();
  if (n == 0 || std::isnan(p)) return kNaN;
  if (n == 1) return sorted[0];
  p = std::clamp(p, 0.0, 1.0);
  const double h = static_cast<double>(n - 1) * p;
  const double lo_f = std::floor(h);
  const auto lo = static_cast<std::size_t>(lo_f);
  const double frac = h - lo_f;
  if (frac == 0.0 || lo + 1 >= n) return sorted[lo];
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double quantile_type7(std::span<const double> values, double p) {
  if (!all_finite(values)) return kNaN;
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  return quantile_type7_sorted(v, p);
}

double median(std::span<const double> values) { return quantile_type7(values, 0.5); }

Summary summarize(std::span<const double> values) {
  Summary s;
  s.n = values.size();
  s.median = s.q1 = s.q3 = s.iqr = s.min = s.max = s.mean = s.relative_iqr = kNaN;
  s.finite = all_finite(values);
  if (s.n == 0 || !s.finite) return s;

  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.q1 = quantile_type7_sorted(v, 0.25);
  s.median = quantile_type7_sorted(v, 0.5);
  s.q3 = quantile_type7_sorted(v, 0.75);
  s.iqr = s.q3 - s.q1;
  s.relative_iqr = s.median != 0.0 ? s.iqr / s.median : kNaN;
  // Summed in sorted order, so the mean's bits do not depend on the input order.
  double sum = 0.0;
  for (const double x : v) sum += x;
  s.mean = sum / static_cast<double>(s.n);
  return s;
}

}  // namespace heapscope::stats
