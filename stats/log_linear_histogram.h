// A log-linear ("HDR-style") histogram of non-negative integers, for per-operation latencies in
// nanoseconds: fixed relative precision over the whole 64-bit range in a fixed-size array.
//
// Buckets ("log-linear-2^-7-v1"):
//   values 0 .. 255             one bucket per value (exact);
//   values in [2^e, 2^(e+1)), e >= 8: 128 equal sub-buckets of width 2^(e-7).
// So a bucket is never wider than 2^-7 of its lowest value; 256 + 56 * 128 = 7424 buckets
// (58 KiB). A quantile is reported as the middle of the bucket holding it, clamped to the
// recorded [min, max], hence within 2^-8 (0.39%) of the exact value, and exact below 256.
//
// Quantile definition: nearest rank, the smallest recorded value v with at least
// ceil(q * count) values <= v (q = 0 gives the minimum, q = 1 the maximum, both exact).
//
// record() and merge() never allocate and never fail: the class is trivially copyable, so it
// can live in memory the caller maps itself (the workload child keeps one per thread there).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace heapscope::stats {

inline constexpr const char* kLogLinearHistogramMethod = "log-linear-2^-7-v1";

class LogLinearHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr std::uint64_t kSubBuckets = std::uint64_t{1} << kSubBucketBits;
  // Below this every value has a bucket of its own.
  static constexpr std::uint64_t kExactBelow = 2 * kSubBuckets;
  static constexpr unsigned kFirstLogExponent = kSubBucketBits + 1;  // 2^8 = kExactBelow
  static constexpr std::size_t kBucketCount = kExactBelow + (64 - kFirstLogExponent) * kSubBuckets;

  static std::size_t bucket_of(std::uint64_t value) {
    if (value < kExactBelow) return static_cast<std::size_t>(value);
    const unsigned exponent = 63u - static_cast<unsigned>(__builtin_clzll(value));
    const unsigned shift = exponent - kSubBucketBits;
    const std::uint64_t sub = (value >> shift) - kSubBuckets;  // in [0, kSubBuckets)
    return static_cast<std::size_t>(kExactBelow + (exponent - kFirstLogExponent) * kSubBuckets +
                                    sub);
  }
  static std::uint64_t bucket_low(std::size_t bucket);
  static std::uint64_t bucket_width(std::size_t bucket);

  void record(std::uint64_t value) {
    ++counts_[bucket_of(value)];
    ++count_;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }

  void merge(const LogLinearHistogram& other);

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ == 0 ? 0 : min_; }  // exact
  std::uint64_t max() const { return max_; }                    // exact; 0 when empty
  std::uint64_t count_in_bucket(std::size_t bucket) const { return counts_[bucket]; }

  // Nearest-rank quantile as defined above, q clamped to [0, 1]; 0 when empty.
  std::uint64_t quantile(double q) const;

 private:
  std::array<std::uint64_t, kBucketCount> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ = 0;
};

static_assert(std::is_trivially_copyable_v<LogLinearHistogram>);

}  // namespace heapscope::stats
