#include "stats/quantile.h"

#include <gtest/gtest.h>

#include <boost/math/statistics/univariate_statistics.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "base/splitmix64.h"

namespace hs = heapscope::stats;

TEST(Quantile, Type7Golden) {
  const std::vector<double> v = {4, 1, 3, 2};  // unsorted on purpose
  EXPECT_DOUBLE_EQ(hs::quantile_type7(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(hs::quantile_type7(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(hs::quantile_type7(v, 0.75), 3.25);
  EXPECT_EQ(hs::quantile_type7(v, 0.0), 1.0);
  EXPECT_EQ(hs::quantile_type7(v, 1.0), 4.0);
}

// Hand-computed: n = 5, p = 0.1 -> h = 0.4 -> 10 + 0.4 * (20 - 10) = 14.
TEST(Quantile, Type7HandComputed) {
  const std::vector<double> v = {10, 20, 30, 40, 50};
  EXPECT_DOUBLE_EQ(hs::quantile_type7(v, 0.1), 14.0);
  EXPECT_EQ(hs::quantile_type7(v, 0.5), 30.0);  // integral h: exact element
}

TEST(Quantile, SmallAndBadInputs) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(hs::quantile_type7(std::vector<double>{}, 0.5)));
  EXPECT_EQ(hs::quantile_type7(std::vector<double>{7.0}, 0.9), 7.0);
  EXPECT_TRUE(std::isnan(hs::quantile_type7(std::vector<double>{1.0, nan}, 0.5)));
  EXPECT_TRUE(std::isnan(hs::quantile_type7(std::vector<double>{1.0, 2.0}, nan)));
}

TEST(Quantile, MedianAgreesWithBoostMath) {
  heapscope::base::SplitMix64 rng(11);
  for (std::size_t n = 1; n <= 40; ++n) {
    std::vector<double> v(n);
    for (auto& x : v) x = rng.uniform01() * 100.0 - 20.0;
    std::vector<double> copy = v;  // Boost reorders its argument
    EXPECT_DOUBLE_EQ(hs::median(v), boost::math::statistics::median(copy)) << "n=" << n;
  }
}

// Boost's interquartile_range uses median-of-halves quartiles, not type 7. Both lie
// between the same neighbouring order statistics, so on a smooth large sample they
// agree closely; on 0..n-1 they differ by exactly the documented half-step amounts.
TEST(Quantile, IqrComparesWithBoostMath) {
  heapscope::base::SplitMix64 rng(12);
  std::vector<double> v(4001);
  for (auto& x : v) x = rng.uniform01();
  std::vector<double> copy = v;
  const double boost_iqr = boost::math::statistics::interquartile_range(copy);
  EXPECT_NEAR(hs::summarize(v).iqr, boost_iqr, 2e-3);
  EXPECT_NEAR(hs::summarize(v).iqr, 0.5, 0.03);  // U(0,1): true IQR 0.5

  std::vector<double> ramp(8);  // n = 4k, k = 2
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<double>(i);
  std::vector<double> ramp_copy = ramp;
  EXPECT_DOUBLE_EQ(hs::summarize(ramp).iqr, 3.5);  // type 7: (n-1)/2
  EXPECT_DOUBLE_EQ(boost::math::statistics::interquartile_range(ramp_copy), 4.0);  // n/2
}

TEST(Summary, AllFieldsOnGolden) {
  const hs::Summary s = hs::summarize(std::vector<double>{1, 2, 3, 4});
  EXPECT_EQ(s.n, 4u);
  EXPECT_TRUE(s.finite);
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  EXPECT_DOUBLE_EQ(s.iqr, 1.5);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 4.0);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.relative_iqr, 0.6);
}

TEST(Summary, EmptyOneAndNonFinite) {
  const hs::Summary empty = hs::summarize(std::vector<double>{});
  EXPECT_EQ(empty.n, 0u);
  EXPECT_TRUE(std::isnan(empty.median));
  const hs::Summary one = hs::summarize(std::vector<double>{5});
  EXPECT_EQ(one.median, 5.0);
  EXPECT_EQ(one.iqr, 0.0);
  const hs::Summary bad =
      hs::summarize(std::vector<double>{1, std::numeric_limits<double>::infinity()});
  EXPECT_FALSE(bad.finite);
  EXPECT_TRUE(std::isnan(bad.median));
  EXPECT_TRUE(std::isnan(bad.mean));
}

TEST(Summary, IndependentOfInputOrder) {
  const hs::Summary a = hs::summarize(std::vector<double>{0.1, 0.7, 0.2, 1e9, 3.3});
  const hs::Summary b = hs::summarize(std::vector<double>{1e9, 3.3, 0.2, 0.1, 0.7});
  EXPECT_EQ(a.mean, b.mean);  // bitwise: summed in sorted order
  EXPECT_EQ(a.median, b.median);
}
