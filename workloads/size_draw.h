// Size distributions, in integers only (no libm), so a stream is bit-identical on every
// machine and compiler.
#pragma once

#include <bit>
#include <cstdint>

#include "base/splitmix64.h"

namespace heapscope::workloads {

// Uniform in [lo, hi].
inline std::uint64_t uniform_size(base::SplitMix64& rng, std::uint64_t lo, std::uint64_t hi) {
  return rng.between(lo, hi);
}

// Piecewise log-uniform on [lo, hi): an octave k in [log2 lo, log2 (hi-1)] uniformly,
// then uniform within [2^k, 2^(k+1)), clamped to [lo, hi-1]. So "8 B–4 KiB" gives every
// octave 8..15, 16..31, ..., 2048..4095 the same probability.
inline std::uint64_t log_uniform_size(base::SplitMix64& rng, std::uint64_t lo, std::uint64_t hi) {
  const unsigned klo = std::bit_width(lo) - 1;
  const unsigned khi = std::bit_width(hi - 1) - 1;
  const unsigned k = klo + static_cast<unsigned>(rng.below(khi - klo + 1));
  std::uint64_t v = (std::uint64_t{1} << k) + rng.below(std::uint64_t{1} << k);
  if (v < lo) v = lo;
  if (v > hi - 1) v = hi - 1;
  return v;
}

}  // namespace heapscope::workloads
