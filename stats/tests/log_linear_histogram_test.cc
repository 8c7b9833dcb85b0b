#include "stats/log_linear_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <vector>

#include "base/splitmix64.h"

namespace hs = heapscope::stats;
using Histogram = hs::LogLinearHistogram;

// Counts every operator new of this test binary, to prove record() and merge() never allocate.
namespace {
std::atomic<std::uint64_t> g_news{0};
}  // namespace
// Not inlined: GCC (ASan at -O1 too) would otherwise see these frees paired with the
// operator new of the same file at inlined call sites and warn of a mismatched new/delete.
__attribute__((noinline)) void* operator new(std::size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

constexpr double kQuantiles[] = {0.0,  0.001, 0.01, 0.1,   0.25,   0.5,
                                 0.75, 0.9,   0.99, 0.999, 0.9999, 1.0};
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// Nearest rank on sorted data: the value at rank max(1, ceil(q n)).
std::uint64_t exact_quantile(const std::vector<std::uint64_t>& sorted, double q) {
  const auto n = static_cast<double>(sorted.size());
  const auto rank = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(q * n)));
  return sorted[std::min(rank, sorted.size()) - 1];
}

// The documented bound: within 2^-8 of the exact value, exact below 256.
void expect_close(std::uint64_t estimate, std::uint64_t exact, const char* what, double q) {
  const double error = std::fabs(static_cast<double>(estimate) - static_cast<double>(exact));
  if (exact < Histogram::kExactBelow) {
    EXPECT_EQ(estimate, exact) << what << " q=" << q;
  } else {
    EXPECT_LE(error, static_cast<double>(exact) * 0x1p-8)
        << what << " q=" << q << " exact " << exact << " estimate " << estimate;
  }
}

void check_against_sort(std::vector<std::uint64_t> values, const char* what) {
  Histogram h;
  for (const std::uint64_t v : values) h.record(v);
  std::sort(values.begin(), values.end());
  ASSERT_EQ(h.count(), values.size());
  EXPECT_EQ(h.min(), values.front()) << what;
  EXPECT_EQ(h.max(), values.back()) << what;
  for (const double q : kQuantiles) expect_close(h.quantile(q), exact_quantile(values, q), what, q);
}

TEST(LogLinearHistogram, BucketsAreContiguousAndWithinRelativePrecision) {
  std::uint64_t expected_low = 0;
  for (std::size_t b = 0; b < Histogram::kBucketCount; ++b) {
    const std::uint64_t low = Histogram::bucket_low(b), width = Histogram::bucket_width(b);
    ASSERT_EQ(low, expected_low) << "bucket " << b;
    ASSERT_EQ(Histogram::bucket_of(low), b);
    ASSERT_EQ(Histogram::bucket_of(low + (width - 1)), b);
    if (low >= Histogram::kExactBelow) {
      ASSERT_LE(width * 128, low) << "bucket " << b;
    }
    expected_low = low + width;  // wraps to 0 after the last bucket
  }
  EXPECT_EQ(expected_low, 0u);
  EXPECT_EQ(Histogram::bucket_of(kMax), Histogram::kBucketCount - 1);
}

TEST(LogLinearHistogram, EdgeValues) {
  Histogram empty;
  EXPECT_EQ(empty.count(), 0u);
  EXPECT_EQ(empty.quantile(0.5), 0u);
  EXPECT_EQ(empty.max(), 0u);
  EXPECT_EQ(empty.min(), 0u);

  check_against_sort({0}, "zero");
  check_against_sort({1}, "one");
  check_against_sort({kMax}, "2^64-1");
  check_against_sort({0, 1, 255, 256, 257, 511, 512, 513, 1023, 1024, (1ull << 32) - 1, 1ull << 32,
                      (1ull << 63) - 1, 1ull << 63, kMax},
                     "powers of two");

  Histogram huge;
  huge.record(kMax);
  huge.record(kMax);
  EXPECT_EQ(huge.quantile(0.5), kMax);  // clamped to the recorded maximum
  EXPECT_EQ(huge.max(), kMax);
}

TEST(LogLinearHistogram, MatchesExactQuantilesOnSeededData) {
  heapscope::base::SplitMix64 rng(20260518);
  for (int round = 0; round < 5; ++round) {
    std::vector<std::uint64_t> uniform, log_uniform, pareto, spiky;
    for (int i = 0; i < 100'000; ++i) {
      uniform.push_back(rng.between(0, 100'000));
      log_uniform.push_back(rng.next() >> rng.below(64));  // every octave equally likely
      // Pareto, alpha 1.1: a heavy tail, like latencies with rare stalls (ns, from 50 ns).
      pareto.push_back(
          static_cast<std::uint64_t>(50.0 / std::pow(1.0 - rng.uniform01(), 1.0 / 1.1)));
      // Mostly ~40 ns, one in 10,000 a 1 ms stall: the shape of the stall control.
      spiky.push_back(rng.below(10'000) == 0 ? 1'000'000 + rng.below(1000) : 30 + rng.below(20));
    }
    check_against_sort(uniform, "uniform");
    check_against_sort(log_uniform, "log-uniform");
    check_against_sort(pareto, "pareto");
    check_against_sort(spiky, "spiky");
  }
  std::vector<std::uint64_t> few{7, 3, 900, 12'345'678};  // small n: ranks 1..4
  check_against_sort(few, "four values");
}

TEST(LogLinearHistogram, MergeEqualsRecordingEverythingInOne) {
  heapscope::base::SplitMix64 rng(7);
  Histogram parts[4], merged, whole;
  for (int i = 0; i < 200'000; ++i) {
    const std::uint64_t v = rng.next() >> rng.below(64);
    parts[rng.below(4)].record(v);
    whole.record(v);
  }
  for (const Histogram& p : parts) merged.merge(p);
  Histogram empty;
  merged.merge(empty);  // merging nothing changes nothing, min included
  EXPECT_EQ(merged.count(), whole.count());
  EXPECT_EQ(merged.min(), whole.min());
  EXPECT_EQ(merged.max(), whole.max());
  for (std::size_t b = 0; b < Histogram::kBucketCount; ++b)
    ASSERT_EQ(merged.count_in_bucket(b), whole.count_in_bucket(b)) << b;
  for (const double q : kQuantiles) EXPECT_EQ(merged.quantile(q), whole.quantile(q)) << q;
}

TEST(LogLinearHistogram, RecordAndMergeNeverAllocate) {
  auto* a = new Histogram();  // the one allocation, before counting
  Histogram b;
  heapscope::base::SplitMix64 rng(3);
  const std::uint64_t before = g_news.load();
  for (int i = 0; i < 100'000; ++i) a->record(rng.next() >> rng.below(64));
  b.merge(*a);
  const std::uint64_t q = b.quantile(0.999);
  EXPECT_EQ(g_news.load(), before);
  EXPECT_GT(q, 0u);
  delete a;
}

}  // namespace
