// A set of slices of one segment: one bit per 64 KiB slice, kSlicesPerSegment bits in
// 64-bit words. Segments keep four of them (free, dirty, young, purged); every operation is
// a short loop over the words, used on the allocation slow path only.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"

namespace heapscope {

struct SliceMap {
  static constexpr size_t kWords = kSlicesPerSegment / 64;
  static_assert(kSlicesPerSegment % 64 == 0);
  uint64_t words[kWords];

  // The slices [first, first + count).
  static constexpr SliceMap range(size_t first, size_t count) {
    SliceMap m{};
    for (size_t w = 0; w < kWords; ++w) {
      size_t lo = w * 64;
      size_t begin = first > lo ? first - lo : 0;
      size_t end = first + count < lo + 64 ? first + count - lo : 64;
      if (first + count <= lo || first >= lo + 64 || begin >= end) continue;
      uint64_t ones = end - begin == 64 ? ~uint64_t{0} : ((uint64_t{1} << (end - begin)) - 1);
      m.words[w] = ones << begin;
    }
    return m;
  }
  static constexpr SliceMap all() { return range(0, kSlicesPerSegment); }

  constexpr bool any() const {
    for (uint64_t word : words) {
      if (word != 0) return true;
    }
    return false;
  }
  constexpr bool none() const { return !any(); }
  constexpr size_t count() const {
    size_t n = 0;
    for (uint64_t word : words) n += static_cast<size_t>(__builtin_popcountll(word));
    return n;
  }
  constexpr bool operator==(const SliceMap& other) const {
    for (size_t w = 0; w < kWords; ++w) {
      if (words[w] != other.words[w]) return false;
    }
    return true;
  }
  constexpr SliceMap operator&(const SliceMap& other) const {
    SliceMap m = *this;
    for (size_t w = 0; w < kWords; ++w) m.words[w] &= other.words[w];
    return m;
  }
  constexpr SliceMap operator|(const SliceMap& other) const {
    SliceMap m = *this;
    for (size_t w = 0; w < kWords; ++w) m.words[w] |= other.words[w];
    return m;
  }
  constexpr SliceMap operator~() const {
    SliceMap m = *this;
    for (uint64_t& word : m.words) word = ~word;
    return m;
  }
  SliceMap& operator&=(const SliceMap& other) { return *this = *this & other; }
  SliceMap& operator|=(const SliceMap& other) { return *this = *this | other; }

  // First set slice at or after `from`, or kSlicesPerSegment.
  constexpr size_t next_set(size_t from) const { return next(from, false); }
  // First clear slice at or after `from`, or kSlicesPerSegment.
  constexpr size_t next_clear(size_t from) const { return next(from, true); }

  // Start of the first run of `length` set slices, or -1.
  constexpr long find_run(size_t length) const {
    size_t start = next_set(0);
    while (start < kSlicesPerSegment) {
      size_t end = next_clear(start);
      if (end - start >= length) return static_cast<long>(start);
      start = next_set(end);
    }
    return -1;
  }

  // Calls fn(first, count) for every maximal run of set slices.
  template <typename Fn>
  void for_each_run(Fn&& fn) const {
    size_t start = next_set(0);
    while (start < kSlicesPerSegment) {
      size_t end = next_clear(start);
      fn(start, end - start);
      start = next_set(end);
    }
  }

 private:
  constexpr size_t next(size_t from, bool clear) const {
    for (size_t w = from / 64; w < kWords; ++w) {
      uint64_t word = clear ? ~words[w] : words[w];
      if (w == from / 64) word &= ~uint64_t{0} << (from % 64);
      if (word != 0) return w * 64 + static_cast<size_t>(__builtin_ctzll(word));
    }
    return kSlicesPerSegment;
  }
};

static_assert(SliceMap::range(0, 3).words[0] == 7);
static_assert(SliceMap::range(62, 4).words[0] == (uint64_t{3} << 62));
static_assert(SliceMap::range(62, 4).words[1] == 3);
static_assert(SliceMap::all().count() == kSlicesPerSegment);
static_assert(SliceMap::range(70, 5).find_run(5) == 70 && SliceMap::range(70, 5).find_run(6) == -1);
static_assert((SliceMap::range(0, 64) | SliceMap::range(64, 10)).find_run(74) == 0);

}  // namespace heapscope
