#include "stats/paired_effect.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "base/splitmix64.h"
#include "stats/bootstrap_seed.h"
#include "stats/quantile.h"

namespace hs = heapscope::stats;

namespace {
bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}
}  // namespace

// Hand-computed: ratios 1.1, 0.9, 1.2 -> median ratio 1.1.
TEST(PairedEffect, PointIsMedianRatioNotRatioOfMedians) {
  const std::vector<double> cand = {110, 9, 1200};
  const std::vector<double> base = {100, 10, 1000};
  const auto e = hs::paired_effect(cand, base, hs::Direction::kHigherIsBetter, {.seed = 1});
  EXPECT_TRUE(e.problem.empty());
  EXPECT_NEAR(e.effect, 1.1, 1e-12);  // ratio of medians would be 110/100 by luck; see next
  const std::vector<double> cand2 = {110, 9, 1200, 50};
  const std::vector<double> base2 = {100, 10, 1000, 100};
  // ratios 1.1, 0.9, 1.2, 0.5 -> type-7 median of logs = mean of ln 0.9 and ln 1.1
  const auto e2 = hs::paired_effect(cand2, base2, hs::Direction::kHigherIsBetter, {.seed = 1});
  EXPECT_NEAR(e2.effect, std::sqrt(0.9 * 1.1), 1e-12);
}

TEST(PairedEffect, LowerIsBetterFlipsSoAboveOneMeansBetter) {
  const std::vector<double> cand_rss = {80, 80, 80};
  const std::vector<double> base_rss = {100, 100, 100};
  const auto e = hs::paired_effect(cand_rss, base_rss, hs::Direction::kLowerIsBetter, {.seed = 1});
  EXPECT_NEAR(e.effect, 1.25, 1e-12);
}

TEST(PairedEffect, ByteIdenticalAcrossRuns) {
  heapscope::base::SplitMix64 rng(3);
  std::vector<double> a(17), b(17);
  for (std::size_t i = 0; i < a.size(); ++i) {
    b[i] = 1e6 * (1 + rng.uniform01());
    a[i] = b[i] * (0.95 + 0.1 * rng.uniform01());
  }
  const hs::BootstrapConfig cfg{.seed = hs::bootstrap_seed(42, "tiny/1/ops_per_sec/x/y")};
  const auto r1 = hs::paired_effect(a, b, hs::Direction::kHigherIsBetter, cfg);
  const auto r2 = hs::paired_effect(a, b, hs::Direction::kHigherIsBetter, cfg);
  EXPECT_TRUE(same_bits(r1.effect, r2.effect));
  EXPECT_TRUE(same_bits(r1.ci_low, r2.ci_low));
  EXPECT_TRUE(same_bits(r1.ci_high, r2.ci_high));
  EXPECT_TRUE(same_bits(r1.log_se, r2.log_se));
  EXPECT_TRUE(same_bits(r1.mde_ratio, r2.mde_ratio));
  EXPECT_EQ(r1.resamples, 10'000u);
  const auto m1 = hs::bootstrap_medians(std::vector<double>{0.3, -0.1, 0.2, 0.0}, 9, 1000);
  const auto m2 = hs::bootstrap_medians(std::vector<double>{0.0, 0.2, -0.1, 0.3}, 9, 1000);
  ASSERT_EQ(m1.size(), m2.size());
  EXPECT_EQ(0, std::memcmp(m1.data(), m2.data(), m1.size() * sizeof(double)))
      << "input order must not matter";
}

// The counting shortcut must give exactly the median of an explicitly built resample.
TEST(PairedEffect, BootstrapMediansMatchExplicitResamples) {
  const std::vector<double> logs = {0.5, -0.25, 0.125, 0.0, 1.0, -1.0};
  std::vector<double> sorted = logs;
  std::sort(sorted.begin(), sorted.end());
  const auto meds = hs::bootstrap_medians(logs, 77, 500);
  heapscope::base::SplitMix64 rng(77);
  for (const double m : meds) {
    std::vector<double> resample;
    for (std::size_t i = 0; i < sorted.size(); ++i)
      resample.push_back(sorted[rng.below(sorted.size())]);
    EXPECT_EQ(m, hs::median(resample));
  }
}

TEST(BootstrapSeed, DeterministicAndKeySensitive) {
  EXPECT_EQ(hs::bootstrap_seed(1, "a/1/ops"), hs::bootstrap_seed(1, "a/1/ops"));
  EXPECT_NE(hs::bootstrap_seed(1, "a/1/ops"), hs::bootstrap_seed(2, "a/1/ops"));
  EXPECT_NE(hs::bootstrap_seed(1, "a/1/ops"), hs::bootstrap_seed(1, "a/2/ops"));
  EXPECT_NE(hs::bootstrap_seed(0, ""), 0u);
}

TEST(PairedEffect, EmptyOneTwoBlocks) {
  const auto none = hs::paired_effect_from_logs(std::vector<double>{}, {});
  EXPECT_EQ(none.problem, "no blocks");
  EXPECT_TRUE(std::isnan(none.effect));
  EXPECT_FALSE(none.ci_valid);

  const auto one = hs::paired_effect(std::vector<double>{2}, std::vector<double>{1},
                                     hs::Direction::kHigherIsBetter, {});
  EXPECT_TRUE(one.problem.empty());
  EXPECT_DOUBLE_EQ(one.effect, 2.0);
  EXPECT_FALSE(one.ci_valid);
  EXPECT_TRUE(std::isnan(one.ci_low));
  EXPECT_FALSE(one.note.empty());

  // Two blocks: resample medians are a, (a+b)/2, b with mass 1/4, 1/2, 1/4, so the
  // 2.5% and 97.5% points are exactly a and b.
  const double a = std::log(0.9), b = std::log(1.2);
  const auto two = hs::paired_effect_from_logs(std::vector<double>{b, a}, {.seed = 5});
  EXPECT_TRUE(two.ci_valid);
  EXPECT_DOUBLE_EQ(two.ci_low, 0.9);
  EXPECT_DOUBLE_EQ(two.ci_high, 1.2);
  EXPECT_FALSE(two.note.empty());
}

TEST(PairedEffect, BadValuesAreReportedNotCrashed) {
  const auto zero = hs::paired_effect(std::vector<double>{1, 0}, std::vector<double>{1, 1},
                                      hs::Direction::kHigherIsBetter, {});
  EXPECT_FALSE(zero.problem.empty());
  EXPECT_TRUE(std::isnan(zero.effect));
  const auto mismatch = hs::paired_effect(std::vector<double>{1, 2}, std::vector<double>{1},
                                          hs::Direction::kHigherIsBetter, {});
  EXPECT_FALSE(mismatch.problem.empty());
  const auto nan =
      hs::paired_effect(std::vector<double>{1, std::numeric_limits<double>::quiet_NaN()},
                        std::vector<double>{1, 1}, hs::Direction::kHigherIsBetter, {});
  EXPECT_FALSE(nan.problem.empty());
}

// Two-block resample: the middle value (a+b)/2 should appear half the time.
TEST(PairedEffect, TwoBlockResampleFrequencies) {
  const auto meds = hs::bootstrap_medians(std::vector<double>{0.0, 1.0}, 8, 40000);
  int middle = 0;
  for (const double m : meds) middle += m == 0.5 ? 1 : 0;
  const double se = std::sqrt(0.25 / 40000);
  EXPECT_NEAR(middle / 40000.0, 0.5, 4.5 * se);
}
