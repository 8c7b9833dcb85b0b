// The sampler's accuracy as statistics. A fixed mixed-size workload (sizes log-uniform on
// 16 B .. 256 KiB, a few thousand live blocks) is allocated afresh under kSeeds different
// session seeds; the unsampled estimate live_bytes_estimate must be unbiased: the mean relative
// error over the seeds lies within kSigmas standard errors (computed from the seeds' spread)
// of 0, and every single run is within a sane band. Positive control: mimalloc-pprof's
// uniform-gap sampler (gap uniform on [1, 2*interval), overshoot discarded, the same
// 1/(1-exp(-s/R)) estimator), simulated here over the same sizes, must FAIL the same check.
// Also: for a fixed size s, the sampled fraction is 1-exp(-s/R) within kSigmas binomial SEs.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../support/test_support.h"
#include "behaviour_support.h"

namespace {

using hs_prof_test::prof_stats;

constexpr uint64_t kInterval = 64 * 1024;
constexpr size_t kBlocks = 3000;
constexpr int kSeeds = 40;
constexpr double kSigmas = 4.0;
constexpr double kBand = 0.15;  // |relative error| of any single run (about 8 SDs here)

std::vector<size_t> workload_sizes() {
  hs_test::SplitMix64 rng(0x5157a71571c5ULL);
  std::vector<size_t> sizes(kBlocks);
  const double lo = std::log(16.0);
  const double hi = std::log(256.0 * 1024.0);
  for (size_t& s : sizes) {
    double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
    s = static_cast<size_t>(std::exp(lo + u * (hi - lo)));
  }
  return sizes;
}

double exact_bytes(const std::vector<size_t>& sizes) {
  double total = 0;
  for (size_t s : sizes) total += static_cast<double>(s);
  return total;
}

double estimator_weight(size_t size, uint64_t interval) {
  return 1.0 / -std::expm1(-static_cast<double>(size) / static_cast<double>(interval));
}

struct Summary {
  double mean = 0;
  double sd = 0;
  double se = 0;
  double max_abs = 0;
  double z() const { return se > 0 ? mean / se : 0; }
};

Summary summarize(const std::vector<double>& errors) {
  Summary s;
  for (double e : errors) {
    s.mean += e;
    s.max_abs = std::max(s.max_abs, std::fabs(e));
  }
  s.mean /= static_cast<double>(errors.size());
  double ss = 0;
  for (double e : errors) ss += (e - s.mean) * (e - s.mean);
  s.sd = std::sqrt(ss / static_cast<double>(errors.size() - 1));
  s.se = s.sd / std::sqrt(static_cast<double>(errors.size()));
  return s;
}

// The statistical check every sampler must pass: unbiased within kSigmas SE.
bool unbiased(const Summary& s) { return s.se > 0 && std::fabs(s.mean) <= kSigmas * s.se; }

// mimalloc-pprof's sampler: a uniform gap on [1, 2R), the overshoot thrown away at each sample.
std::vector<double> uniform_gap_errors(const std::vector<size_t>& sizes) {
  const double truth = exact_bytes(sizes);
  std::vector<double> errors;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    hs_test::SplitMix64 rng(static_cast<uint64_t>(seed) * 0x9e3779b97f4a7c15ULL);
    auto gap = [&] { return static_cast<int64_t>(1 + rng.next() % (2 * kInterval - 1)); };
    int64_t countdown = gap();
    double estimate = 0;
    for (size_t s : sizes) {
      countdown -= static_cast<int64_t>(s);
      if (countdown <= 0) {
        estimate += static_cast<double>(s) * estimator_weight(s, kInterval);
        countdown = gap();  // excess discarded
      }
    }
    errors.push_back(estimate / truth - 1.0);
  }
  return errors;
}

class ProfAccuracy : public ::testing::Test {
 protected:
  void SetUp() override {
    hs_prof_stop();
    ASSERT_FALSE(hs_prof_is_enabled());
  }
  void TearDown() override { hs_prof_stop(); }
};

TEST_F(ProfAccuracy, LiveBytesEstimateUnbiasedOverSeedsAndUniformGapControlRejected) {
  const std::vector<size_t> sizes = workload_sizes();
  const double truth = exact_bytes(sizes);
  std::vector<double> byte_errors;
  std::vector<double> object_errors;
  std::vector<void*> blocks(sizes.size());
  uint64_t total_samples = 0;
  for (int round = 0; round < kSeeds; ++round) {
    const uint64_t seed = 0xacc0000ULL + static_cast<uint64_t>(round) * 7919;
    ASSERT_TRUE(hs_prof_start_seeded(kInterval, seed));
    for (size_t i = 0; i < sizes.size(); ++i) {
      blocks[i] = hs_malloc(sizes[i]);
      ASSERT_NE(blocks[i], nullptr);
    }
    hs_prof_stats_t s = prof_stats();
    EXPECT_EQ(s.seed, seed);
    EXPECT_EQ(s.sample_interval, kInterval);
    EXPECT_EQ(s.dropped_samples, 0u);
    ASSERT_GT(s.live_samples, 0u);
    ASSERT_LE(s.live_samples, sizes.size());
    // The raw counts agree with a visit of the same moment.
    hs_prof_test::VisitSums sums = hs_prof_test::visit_now();
    EXPECT_EQ(sums.live_objects, s.live_samples);
    EXPECT_EQ(sums.live_bytes, s.live_bytes);
    EXPECT_NEAR(sums.live_bytes_estimate, s.live_bytes_estimate, 1e-6 * truth);
    double error = s.live_bytes_estimate / truth - 1.0;
    EXPECT_LE(std::fabs(error), kBand)
        << "seed " << seed << " estimate " << s.live_bytes_estimate << " truth " << truth;
    byte_errors.push_back(error);
    object_errors.push_back(s.live_objects_estimate / static_cast<double>(sizes.size()) - 1.0);
    total_samples += s.live_samples;
    for (void* p : blocks) hs_free(p);
    s = prof_stats();
    EXPECT_EQ(s.live_samples, 0u);
    EXPECT_EQ(s.live_bytes, 0u);
    EXPECT_EQ(s.live_bytes_estimate, 0.0);
    hs_prof_stop();
  }
  // Samples per run: about sum(1 - exp(-s/R)) over the workload.
  double expected_samples = 0;
  for (size_t s : sizes) expected_samples += -std::expm1(-static_cast<double>(s) / kInterval);
  double mean_samples = static_cast<double>(total_samples) / kSeeds;
  EXPECT_NEAR(mean_samples, expected_samples, kSigmas * std::sqrt(expected_samples / kSeeds));

  Summary engine = summarize(byte_errors);
  Summary objects = summarize(object_errors);
  Summary control = summarize(uniform_gap_errors(sizes));
  std::printf(
      "[accuracy] %zu blocks (%.1f MiB), interval %llu, %d seeds, %.1f samples/run\n"
      "[accuracy] engine bytes:   mean rel. error %+.4f +- %.4f SE (sd %.4f, max |e| %.4f, z "
      "%+.2f)\n"
      "[accuracy] engine objects: mean rel. error %+.4f +- %.4f SE (z %+.2f)\n"
      "[accuracy] uniform-gap control: mean rel. error %+.4f +- %.4f SE (sd %.4f, z %+.2f)\n",
      sizes.size(), truth / (1 << 20), static_cast<unsigned long long>(kInterval), kSeeds,
      mean_samples, engine.mean, engine.se, engine.sd, engine.max_abs, engine.z(), objects.mean,
      objects.se, objects.z(), control.mean, control.se, control.sd, control.z());
  RecordProperty("engine_mean_rel_error", std::to_string(engine.mean));
  RecordProperty("engine_se", std::to_string(engine.se));
  RecordProperty("control_mean_rel_error", std::to_string(control.mean));
  RecordProperty("control_se", std::to_string(control.se));

  EXPECT_TRUE(unbiased(engine)) << "engine: mean " << engine.mean << " SE " << engine.se;
  EXPECT_TRUE(unbiased(objects)) << "objects: mean " << objects.mean << " SE " << objects.se;
  // The positive control: the same check must reject the uniform-gap sampler.
  EXPECT_FALSE(unbiased(control)) << "control: mean " << control.mean << " SE " << control.se;
  EXPECT_GT(std::fabs(control.z()), 2 * kSigmas) << "the control must be far outside k SE";
  // And the check is not vacuous: both spreads are real (not a constant estimator).
  EXPECT_GT(engine.sd, 0.001);
  EXPECT_GT(control.sd, 0.001);
}

// For blocks of one size s, each is sampled with probability 1 - exp(-s/R) independently
// (disjoint byte ranges of a Poisson process): the count is binomial.
TEST_F(ProfAccuracy, SampledFractionMatchesPoissonProbabilityPerSize) {
  constexpr uint64_t kR = 4096;
  const size_t n = hs_test::kSanitized ? 8000 : 20000;
  for (size_t size : {size_t{256}, size_t{1024}, size_t{4096}, size_t{12288}}) {
    ASSERT_TRUE(hs_prof_start_seeded(kR, 0xf4ac71011ULL + size));
    for (size_t i = 0; i < n; ++i) {
      void* p = hs_malloc(size);
      ASSERT_NE(p, nullptr);
      hs_free(p);
    }
    hs_prof_stats_t s = prof_stats();
    EXPECT_EQ(s.dropped_samples, 0u);
    EXPECT_EQ(s.live_samples, 0u);
    double p = -std::expm1(-static_cast<double>(size) / kR);
    double mean = p * static_cast<double>(n);
    double se = std::sqrt(static_cast<double>(n) * p * (1 - p));
    std::printf("[accuracy] size %zu at R=%llu: sampled %llu of %zu, expected %.1f +- %.1f\n", size,
                static_cast<unsigned long long>(kR),
                static_cast<unsigned long long>(s.total_samples), n, mean, se);
    EXPECT_NEAR(static_cast<double>(s.total_samples), mean, kSigmas * se) << "size " << size;
    hs_prof_stop();
  }
}

}  // namespace
