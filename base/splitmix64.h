// SplitMix64: the one PRNG of heapscope (streams, block orders, bootstrap).
//
// Chosen because it is tiny, constexpr, passes BigCrush, and any seed (even 0) is
// fine, so seeds can be derived by simple mixing. Bounded draws use Lemire's
// multiply-shift with rejection, so they are exactly unbiased ("splitmix64-lemire-v1").
// Header-only: workloads/ (a higher layer) includes it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace heapscope::base {

inline constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// The splitmix64 output function (also a good 64-bit finaliser for hashing).
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class SplitMix64 {
 public:
  static constexpr const char* kMethod = "splitmix64-lemire-v1";

  constexpr explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  constexpr std::uint64_t next() {
    state_ += kGolden;
    return splitmix64_mix(state_);
  }

  // Uniform integer in [0, n), n > 0 (returns 0 for n == 0). Lemire 2019: the high
  // half of next()*n; a low half below (2^64 mod n) falls in the biased zone and is
  // redrawn, so every value has exactly the same number of preimages.
  constexpr std::uint64_t below(std::uint64_t n) {
    if (n == 0) return 0;
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Uniform integer in [lo, hi] (inclusive), lo <= hi.
  constexpr std::uint64_t between(std::uint64_t lo, std::uint64_t hi) {
    const std::uint64_t span = hi - lo + 1;
    return span == 0 ? next() : lo + below(span);  // span 0: the full 64-bit range
  }

  // Uniform double in [0, 1) with 53 random bits (for simulation in tests).
  constexpr double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  constexpr std::uint64_t state() const { return state_; }

 private:
  std::uint64_t state_;
};

// Fisher–Yates: position i swaps with a uniform j in [0, i], drawn without modulo bias.
template <class T>
constexpr void shuffle(std::span<T> items, SplitMix64& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.below(i));
    using std::swap;
    swap(items[i - 1], items[j]);
  }
}

}  // namespace heapscope::base
