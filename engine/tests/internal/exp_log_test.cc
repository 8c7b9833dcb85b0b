// support/exp_log.h against libm: the profiler's sampling math (distances and weights) must be
// as accurate as libm's log1p/expm1 were, over the inputs sampling.cc gives them and beyond.
#include "support/exp_log.h"

#include <gtest/gtest.h>
#include <math.h>
#include <stdio.h>

#include <cmath>
#include <limits>

#include "base/splitmix64.h"

namespace {

// A few ulp (2^-52 is 1 ulp at 1.0): both sides may be off by about an ulp.
constexpr double kMaxRelativeError = 4 * 0x1.0p-52;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

double relative_error(double got, double want) {
  if (got == want) return 0;
  return fabs(got - want) / fabs(want);
}

// Random doubles spread over [lo, hi) evenly in log scale (sign from the sign of lo/hi).
template <typename Check>
void over_log_range(double lo_magnitude, double hi_magnitude, double sign, Check check) {
  uint64_t state = 0x5eed;
  double log_lo = log(lo_magnitude);
  double log_hi = log(hi_magnitude);
  for (int i = 0; i < 200000; ++i) {
    state += heapscope::base::kGolden;
    double u = static_cast<double>(heapscope::base::splitmix64_mix(state) >> 11) * 0x1.0p-53;
    check(sign * exp(log_lo + u * (log_hi - log_lo)));
  }
}

TEST(ExpLog, Log1pMatchesLibm) {
  double worst = 0;
  auto check = [&](double x) {
    double e = relative_error(heapscope::math::log1p(x), log1p(x));
    EXPECT_LE(e, kMaxRelativeError) << "x = " << x;
    if (e > worst) worst = e;
  };
  // sampling.cc: log1p(-u) for a uniform u in [0, 1), down to u = 2^-53.
  over_log_range(0x1.0p-60, 1.0 - 0x1.0p-53, -1.0, check);
  over_log_range(0x1.0p-60, 1e300, 1.0, check);
  for (double x : {0.0, -0.0, 0x1.0p-1074, -0.5, 0.5, 1.0, -1.0 + 0x1.0p-53, 0x1.0p-1030}) {
    check(x);
  }
  EXPECT_EQ(heapscope::math::log1p(-1.0), -kInfinity);
  EXPECT_TRUE(std::isnan(heapscope::math::log1p(-2.0)));
  printf("worst relative error: %.2f ulp\n", worst / 0x1.0p-52);
}

TEST(ExpLog, Expm1MatchesLibm) {
  double worst = 0;
  auto check = [&](double x) {
    double e = relative_error(heapscope::math::expm1(x), expm1(x));
    EXPECT_LE(e, kMaxRelativeError) << "x = " << x;
    if (e > worst) worst = e;
  };
  // sampling.cc: expm1(-size / interval), size from 1 byte to far beyond the interval.
  over_log_range(0x1.0p-60, 745.0, -1.0, check);
  over_log_range(0x1.0p-60, 709.0, 1.0, check);
  for (double x :
       {0.0, -0.0, 0x1.0p-1074, -0.5, 0.5, -0.49999999, 0.4999999, -40.0, -41.0, -1000.0}) {
    check(x);
  }
  EXPECT_EQ(heapscope::math::expm1(-kInfinity), -1.0);
  EXPECT_EQ(heapscope::math::expm1(1000.0), kInfinity);
  EXPECT_TRUE(std::isnan(heapscope::math::expm1(std::numeric_limits<double>::quiet_NaN())));
  printf("worst relative error: %.2f ulp\n", worst / 0x1.0p-52);
}

}  // namespace
