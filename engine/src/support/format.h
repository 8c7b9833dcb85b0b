// Number formatting that never allocates, for code that runs inside the allocator (error
// reports, the statistics printout, profile file names and build IDs). Each function writes
// digits only, no terminating NUL unless it says so, and returns how many characters it wrote.
// Not OS code: it lives apart from platform/ and depends on nothing.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace heapscope::fmt {

inline constexpr size_t kMaxDecimalDigits = 20;  // UINT64_MAX has 20 decimal digits
inline constexpr size_t kMaxHexDigits = 16;
inline constexpr char kHexDigits[] = "0123456789abcdef";

// `value` in decimal, left-padded with zeros to at least `min_digits` (at most
// kMaxDecimalDigits). `out` must hold max(kMaxDecimalDigits, min_digits) characters.
inline size_t decimal(uint64_t value, char* out, size_t min_digits = 1) {
  char reversed[kMaxDecimalDigits];
  size_t count = 0;
  do {
    reversed[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  size_t len = 0;
  for (size_t pad = count; pad < min_digits && pad < kMaxDecimalDigits; ++pad) out[len++] = '0';
  while (count > 0) out[len++] = reversed[--count];
  return len;
}

// `value` in lowercase hexadecimal without a prefix; `out` must hold kMaxHexDigits characters.
inline size_t hex(uint64_t value, char* out) {
  char reversed[kMaxHexDigits];
  size_t count = 0;
  do {
    reversed[count++] = kHexDigits[value & 15];
    value >>= 4;
  } while (value != 0);
  size_t len = 0;
  while (count > 0) out[len++] = reversed[--count];
  return len;
}

// `size` bytes as lowercase hex, two digits per byte, then a NUL; `out` must hold 2 * size + 1.
inline size_t hex_bytes(const uint8_t* bytes, size_t size, char* out) {
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kHexDigits[bytes[i] >> 4];
    out[2 * i + 1] = kHexDigits[bytes[i] & 15];
  }
  out[2 * size] = '\0';
  return 2 * size;
}

}  // namespace heapscope::fmt
