// The fuzz input read as a stream of big-endian numbers; past its end every read is 0, so a
// target never has to check lengths before it draws.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapscope::fuzz {

struct FuzzInput {
  const uint8_t* data;
  size_t left;

  uint64_t take(size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && left > 0; ++i, --left) v = (v << 8) | *data++;
    return v;
  }
};

}  // namespace heapscope::fuzz
