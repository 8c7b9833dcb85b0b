// log1p and expm1 for the profiler's Poisson sampling (profiler/sampling.cc), so the engine's
// libraries need no libm (engine/README.md, "Dependencies"). Both run once per sample, not per
// allocation: plain series after range reduction, within a few ulp of libm (tested against it
// in tests/internal/exp_log_test.cc).
#pragma once

#include <stdint.h>
#include <string.h>

namespace heapscope::math {

namespace detail {

// ln 2 split so that e * kLn2Hi is exact for any binary64 exponent e.
inline constexpr double kLn2Hi = 6.93147180369123816490e-01;
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;
inline constexpr double kSqrtHalf = 0.70710678118654752440;

inline uint64_t bits_of(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits;
}

inline double from_bits(uint64_t bits) {
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

// 2^k for a k that gives a normal double.
inline double pow2(int k) { return from_bits(static_cast<uint64_t>(k + 1023) << 52); }

// 1/n for expm1's series: a multiplication per term instead of a division (its chain of
// seventeen divisions made sample_weight 0.37% of a churn run under perf; now 0.05%).
inline constexpr double kInverse[19] = {0,        1,        1.0 / 2,  1.0 / 3,  1.0 / 4,
                                        1.0 / 5,  1.0 / 6,  1.0 / 7,  1.0 / 8,  1.0 / 9,
                                        1.0 / 10, 1.0 / 11, 1.0 / 12, 1.0 / 13, 1.0 / 14,
                                        1.0 / 15, 1.0 / 16, 1.0 / 17, 1.0 / 18};

// Natural log of a finite y > 0: y = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
// log(m) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) with s = (m - 1) / (m + 1), |s| < 0.172,
// so s^2 < 0.0295 and 12 terms reach below 2^-60.
inline double log_positive(double y) {
  int e = 0;
  if (y < 0x1.0p-1022) {  // subnormal: make it normal first
    y *= 0x1.0p54;
    e = -54;
  }
  uint64_t bits = bits_of(y);
  e += static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  double m = from_bits((bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52));  // [1, 2)
  if (m >= 2 * kSqrtHalf) {
    m *= 0.5;
    e += 1;
  }
  double s = (m - 1.0) / (m + 1.0);
  double s2 = s * s;
  double sum = 0.0;
  // The compiler unrolls this loop and folds each 1.0 / k: no division at run time.
  for (int k = 23; k >= 3; k -= 2) sum = (sum + 1.0 / k) * s2;
  double log_m = 2.0 * s + 2.0 * s * sum;
  return e * kLn2Hi + (e * kLn2Lo + log_m);
}

// exp(r) - 1 for |r| < 1/2: the Taylor series, |r|^k / k! < 2^-60 by k = 18, summed
// innermost first as r (1 + r/2 (1 + r/3 (...))) so every step adds to about 1. Sampling
// mostly asks for tiny r (a block's size over the interval): below 2^-10, seven terms reach
// 2^-70 (r^7 / 7!), so the rest are skipped.
inline double expm1_small(double r) {
  double inner = 1.0;
  int terms = (r > -0x1.0p-10 && r < 0x1.0p-10) ? 7 : 18;
  for (int n = terms; n >= 2; --n) inner = 1.0 + inner * r * kInverse[n];
  return r * inner;
}

}  // namespace detail

// log(1 + x) for x > -1, accurate also where x is tiny. The rounding of 1 + x is undone by
// scaling with x / (u - 1) (Goldberg, "What every computer scientist should know about
// floating-point arithmetic", theorem 4).
inline double log1p(double x) {
  if (!(x > -1.0)) return x == -1.0 ? -__builtin_inf() : __builtin_nan("");
  double u = 1.0 + x;
  if (u == 1.0) return x;
  if (u == __builtin_inf()) return u;
  return detail::log_positive(u) * (x / (u - 1.0));
}

// exp(x) - 1, accurate also where x is tiny.
inline double expm1(double x) {
  if (x != x) return x;
  if (x < -40.0) return -1.0;  // exp(x) < 2^-57: -1 to the last bit
  if (x > 709.0) return __builtin_inf();
  if (x > -0.5 && x < 0.5) return detail::expm1_small(x);
  // x = k ln2 + r with |r| <= ln2 / 2: exp(x) - 1 = 2^k (exp(r) - 1) + (2^k - 1), where
  // 2^k - 1 is exact for the k that matter (|k| <= 53) and the first term carries the error.
  int k = static_cast<int>(x * 1.44269504088896340736 + (x < 0 ? -0.5 : 0.5));
  double r = (x - k * detail::kLn2Hi) - k * detail::kLn2Lo;
  double scale = detail::pow2(k);
  return scale * detail::expm1_small(r) + (scale - 1.0);
}

}  // namespace heapscope::math
