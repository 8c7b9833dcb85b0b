// SliceMap (engine/src/core/slice_map.h) against a std::bitset model: random sets, every run
// length, runs that cross word boundaries.
#include "core/slice_map.h"

#include <gtest/gtest.h>

#include <bitset>
#include <utility>
#include <vector>

#include "../support/test_support.h"

namespace {

using heapscope::kSlicesPerSegment;
using heapscope::SliceMap;
using Model = std::bitset<kSlicesPerSegment>;

Model model_of(const SliceMap& m) {
  Model b;
  for (size_t i = 0; i < kSlicesPerSegment; ++i) b[i] = ((m.words[i / 64] >> (i % 64)) & 1) != 0;
  return b;
}

long model_find_run(const Model& b, size_t length) {
  size_t run = 0;
  for (size_t i = 0; i < kSlicesPerSegment; ++i) {
    run = b[i] ? run + 1 : 0;
    if (run >= length) return static_cast<long>(i + 1 - length);
  }
  return -1;
}

// A random set made of a few runs, so long runs (across words) are common.
SliceMap random_map(hs_test::SplitMix64& rng) {
  SliceMap m{};
  const size_t runs = rng.between(0, 12);
  for (size_t r = 0; r < runs; ++r) {
    const size_t first = rng.between(0, kSlicesPerSegment - 1);
    const size_t count = rng.between(1, kSlicesPerSegment - first);
    m |= SliceMap::range(first, count);
  }
  return m;
}

TEST(SliceMap, RangeMatchesTheModel) {
  for (size_t first = 0; first < kSlicesPerSegment; first += 7) {
    for (size_t count = 1; first + count <= kSlicesPerSegment; count += 13) {
      Model expected;
      for (size_t i = first; i < first + count; ++i) expected[i] = true;
      ASSERT_EQ(model_of(SliceMap::range(first, count)), expected) << first << "+" << count;
    }
  }
  EXPECT_EQ(SliceMap::all().count(), kSlicesPerSegment);
  EXPECT_TRUE(SliceMap{}.none());
}

TEST(SliceMap, FindRunCountAndRunsMatchTheModel) {
  hs_test::SplitMix64 rng(77);
  for (int trial = 0; trial < 2000; ++trial) {
    const SliceMap a = random_map(rng);
    const SliceMap b = random_map(rng);
    const Model ma = model_of(a);
    ASSERT_EQ(a.count(), ma.count());
    ASSERT_EQ(model_of(a & b), ma & model_of(b));
    ASSERT_EQ(model_of(a | b), ma | model_of(b));
    ASSERT_EQ(model_of(a & ~b), ma & ~model_of(b));
    for (size_t length : {size_t{1}, size_t{2}, size_t{8}, size_t{63}, size_t{64}, size_t{65},
                          size_t{200}, kSlicesPerSegment}) {
      ASSERT_EQ(a.find_run(length), model_find_run(ma, length)) << "length " << length;
    }
    // for_each_run visits maximal runs, in order, that together make up the set.
    Model rebuilt;
    size_t previous_end = 0;
    bool first_run = true;
    a.for_each_run([&](size_t first, size_t count) {
      ASSERT_GT(count, 0u);
      if (!first_run) {
        ASSERT_GT(first, previous_end) << "runs must be maximal and ordered";
      }
      first_run = false;
      for (size_t i = first; i < first + count; ++i) rebuilt[i] = true;
      previous_end = first + count;
    });
    ASSERT_EQ(rebuilt, ma);
  }
}

}  // namespace
