// FNV-1a 64: the documented string hash used to turn names and keys (workload
// names, cell keys) into 64-bit seed material. Not used for bulk data.
#pragma once

#include <cstdint>
#include <string_view>

namespace heapscope::base {

inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
inline constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

constexpr std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h = kFnvOffset) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
  }
  return h;
}

}  // namespace heapscope::base
