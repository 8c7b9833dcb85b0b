// The segment map's address range (engine/src/core/segment.h): it covers every address the OS
// hands out without a hint on this architecture (47 bits on x86-64, 48 on AArch64), and the
// range test used before a mapping is entered rejects anything reaching past it (entering such
// a mapping is then fatal rather than leaving its blocks untracked).
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>

#include <cstdint>

#include "../support/test_support.h"
#include "core/segment.h"

namespace {

using heapscope::kAddressBits;
using heapscope::kSegmentSize;
using heapscope::segment_map_covers;

TEST(SegmentMapRange, MatchesTheArchitecture) {
#if defined(__x86_64__)
  EXPECT_EQ(kAddressBits, 47u);
#elif defined(__aarch64__)
  EXPECT_EQ(kAddressBits, 48u);
#endif
  constexpr uintptr_t end = uintptr_t{1} << kAddressBits;
  EXPECT_TRUE(segment_map_covers(0, kSegmentSize));
  EXPECT_TRUE(segment_map_covers(end - kSegmentSize, kSegmentSize));       // the last segment
  EXPECT_FALSE(segment_map_covers(end - kSegmentSize, 2 * kSegmentSize));  // runs past the end
  EXPECT_FALSE(segment_map_covers(end, kSegmentSize));
  EXPECT_FALSE(segment_map_covers(UINTPTR_MAX & ~(kSegmentSize - 1), kSegmentSize));
  EXPECT_FALSE(segment_map_covers(kSegmentSize, SIZE_MAX));  // no wrap-around
#if defined(__aarch64__)
  // Where x86-64's map ends, AArch64's 48-bit user space goes on (real mappings live there).
  EXPECT_TRUE(segment_map_covers(uintptr_t{1} << 47, kSegmentSize));
#endif
}

TEST(SegmentMapRange, TheOsMappingsOfThisProcessAreInside) {
  // A small block, a huge one, and this thread's stack (the top of the address space the OS
  // uses): all below the map's end.
  void* small = hs_malloc(64);
  void* huge = hs_malloc(64 * hs_test::kMiB);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(huge, nullptr);
  int local = 0;
  for (uintptr_t address : {reinterpret_cast<uintptr_t>(small), reinterpret_cast<uintptr_t>(huge),
                            reinterpret_cast<uintptr_t>(&local)}) {
    EXPECT_TRUE(segment_map_covers(address & ~(kSegmentSize - 1), kSegmentSize))
        << std::hex << address;
  }
  hs_free(huge);
  hs_free(small);
}

}  // namespace
