// Size classes ("bins"): multiples of 16 up to 128 bytes, then four classes per power of two
// (at most 25% internal waste just past a power of two, 12.5% on average) up to kLargeMax,
// with a fifth from 1 KiB to 8 KiB an eighth past the power of two: buffers of a power of two
// plus a header (1,032 or 4,368 bytes) fill one-slice pages by the thousand, and would waste
// up to a quarter of them, resident. Only that one: each class more is another page per
// thread for a program of random sizes (eight a power of two there took mimalloc-bench's
// glibc-thread and rptest to 1.12x and 1.48x the peak). Every class size is a multiple of 16,
// and a multiple of any power of two it is rounded to, which is what makes aligned
// allocation on slice-aligned pages come for free.
#pragma once

#include "core/common.h"

namespace heapscope {

inline constexpr size_t kFineFirstShift = 10;  // sizes in (1 KiB, 8 KiB]
inline constexpr size_t kFineEndShift = 13;
inline constexpr size_t kFineFirstBin = 21;  // 1152
inline constexpr size_t kCoarseAgainBin = kFineFirstBin + (kFineEndShift - kFineFirstShift) * 5;
inline constexpr size_t kLargeMaxShift = static_cast<size_t>(__builtin_ctzll(kLargeMax));
inline constexpr size_t kBinCount =
    kCoarseAgainBin + (kLargeMaxShift - kFineEndShift) * 4;  // bin 0 unused

constexpr size_t bin_of(size_t size) {
  if (size <= 128) return size <= 16 ? 1 : (size + 15) >> 4;
  size_t s = size - 1;
  size_t w = 63 - static_cast<size_t>(__builtin_clzll(s));  // s in [2^w, 2^(w+1))
  if (w < kFineFirstShift) return 9 + (w - 7) * 4 + ((s >> (w - 2)) & 3);
  if (w < kFineEndShift) {  // the eighth past 2^w, then the quarters
    const size_t eighth = (s >> (w - 3)) & 7;
    return kFineFirstBin + (w - kFineFirstShift) * 5 + (eighth == 0 ? 0 : eighth / 2 + 1);
  }
  return kCoarseAgainBin + (w - kFineEndShift) * 4 + ((s >> (w - 2)) & 3);
}

constexpr size_t bin_block_size(size_t bin) {
  if (bin <= 8) return bin * 16;
  if (bin < kFineFirstBin) {
    size_t w = 7 + (bin - 9) / 4;
    size_t k = (bin - 9) % 4;  // class 2^w + (k+1) * 2^(w-2)
    return (size_t{1} << w) + (k + 1) * (size_t{1} << (w - 2));
  }
  if (bin < kCoarseAgainBin) {
    size_t w = kFineFirstShift + (bin - kFineFirstBin) / 5;
    size_t j = (bin - kFineFirstBin) % 5;
    return (size_t{1} << w) + (j == 0 ? (size_t{1} << (w - 3)) : j * (size_t{1} << (w - 2)));
  }
  size_t w = kFineEndShift + (bin - kCoarseAgainBin) / 4;
  size_t k = (bin - kCoarseAgainBin) % 4;
  return (size_t{1} << w) + (k + 1) * (size_t{1} << (w - 2));
}

// Slices per page for a bin: one for small blocks, four for medium, whole-block spans above.
constexpr size_t bin_page_slices(size_t bin) {
  size_t block = bin_block_size(bin);
  if (block <= kSmallBlockMax) return 1;
  if (block <= kMediumBlockMax) return kMediumPageSlices;
  return (block + kSliceSize - 1) / kSliceSize;
}

// Bins 1.. of one-slice pages (blocks up to kSmallBlockMax), and 0.
inline constexpr size_t kSmallBinCount = bin_of(kSmallBlockMax) + 1;

static_assert(bin_of(1) == 1 && bin_block_size(1) == 16);
static_assert(bin_of(128) == 8 && bin_of(129) == 9 && bin_block_size(9) == 160);
static_assert(bin_of(256) == 12 && bin_block_size(12) == 256 && bin_of(257) == 13);
static_assert(bin_block_size(kFineFirstBin) == 1152 && bin_of(1152) == kFineFirstBin &&
              bin_of(1153) == kFineFirstBin + 1 && bin_block_size(kFineFirstBin + 1) == 1280);
static_assert(bin_block_size(kCoarseAgainBin - 1) == kSmallBlockMax &&
              bin_block_size(kCoarseAgainBin) == 10240);
static_assert(bin_of(kLargeMax) == kBinCount - 1 && bin_block_size(kBinCount - 1) == kLargeMax);
static_assert(bin_page_slices(kBinCount - 1) == 256);

// The direct tables (page_queue.h, direct_update) rely on this: the small table ends on a class
// boundary, and every class served by the medium table is a multiple of its step.
constexpr bool medium_classes_fit_direct_step() {
  if (bin_block_size(bin_of(kSmallDirectMax)) != kSmallDirectMax) return false;
  if (bin_block_size(bin_of(kMediumBlockMax)) != kMediumBlockMax) return false;
  for (size_t bin = bin_of(kSmallDirectMax) + 1; bin <= bin_of(kMediumBlockMax); ++bin) {
    if (bin_block_size(bin) % kMediumDirectStep != 0) return false;
  }
  return true;
}
static_assert(medium_classes_fit_direct_step());

// A medium page's blocks fill it to within an eighth (the 56 KiB class: 4 blocks, 32 KiB
// left over): a shorter kMediumPageSlices that left a class more slack fails here.
constexpr bool medium_pages_fill_to_an_eighth() {
  for (size_t bin = bin_of(kSmallBlockMax) + 1; bin <= bin_of(kMediumBlockMax); ++bin) {
    const size_t page = bin_page_slices(bin) * kSliceSize;
    const size_t slack = page % bin_block_size(bin);
    if (slack * 8 > page) return false;
  }
  return true;
}
static_assert(medium_pages_fill_to_an_eighth());

}  // namespace heapscope
