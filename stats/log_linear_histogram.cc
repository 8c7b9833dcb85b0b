#include "stats/log_linear_histogram.h"

#include <algorithm>
#include <cmath>

namespace heapscope::stats {

std::uint64_t LogLinearHistogram::bucket_low(std::size_t bucket) {
  if (bucket < kExactBelow) return bucket;
  const std::size_t k = bucket - kExactBelow;
  const unsigned exponent = kFirstLogExponent + static_cast<unsigned>(k / kSubBuckets);
  return (kSubBuckets + k % kSubBuckets) << (exponent - kSubBucketBits);
}

std::uint64_t LogLinearHistogram::bucket_width(std::size_t bucket) {
  if (bucket < kExactBelow) return 1;
  const auto exponent =
      kFirstLogExponent + static_cast<unsigned>((bucket - kExactBelow) / kSubBuckets);
  return std::uint64_t{1} << (exponent - kSubBucketBits);
}

void LogLinearHistogram::merge(const LogLinearHistogram& other) {
  for (std::size_t i = 0; i < kBucketCount; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

std::uint64_t LogLinearHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(std::isnan(q) ? 0.0 : q, 0.0, 1.0);
  // ceil(q * count) in doubles is exact enough for any count below 2^53.
  const auto wanted = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
  if (wanted >= count_) return max_;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBucketCount; ++i) {
    seen += counts_[i];
    if (seen >= wanted) {
      // The bucket's middle: at most half a bucket, 2^-8 of the value, from any value in it.
      const std::uint64_t middle = bucket_low(i) + bucket_width(i) / 2;
      return std::clamp(middle, min_, max_);
    }
  }
  return max_;  // unreachable: the counts add up to count_
}

}  // namespace heapscope::stats
