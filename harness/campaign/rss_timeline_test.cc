// The bounded RSS timeline (rss_timeline.h): every read kept while there is room; beyond it,
// each point between the first and the closing read is exactly the maximum of its stretch of
// `stride` reads, at that read's time, so the peak survives any length of replay.
#include "harness/campaign/rss_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/splitmix64.h"

namespace heapscope::harness {
namespace {

TEST(RssTimeline, KeepsEveryReadWhileThereIsRoom) {
  RssTimeline timeline(8);
  for (std::uint64_t i = 0; i < 7; ++i) timeline.add(0.002 * static_cast<double>(i), 100 + i);
  timeline.close(0.02, 50);
  const auto points = timeline.points();
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(timeline.stride(), 1u);
  for (std::size_t i = 0; i < 7; ++i) {
    EXPECT_DOUBLE_EQ(points[i].seconds, 0.002 * static_cast<double>(i));
    EXPECT_EQ(points[i].bytes, 100 + i);
  }
  EXPECT_DOUBLE_EQ(points[7].seconds, 0.02);
  EXPECT_EQ(points[7].bytes, 50u);
}

// Reads 0 .. n-1 at times 0 .. n-1; read 0 is the first, kept as it is, and the closing read
// comes after them. Between, point k covers reads [1 + k * stride, 1 + (k + 1) * stride).
TEST(RssTimeline, EachPointIsTheMaximumOfItsStretchAtItsOwnTime) {
  for (const std::size_t reads : {10u, 129u, 130u, 1000u, 10007u}) {
    base::SplitMix64 rng(reads);
    std::vector<std::uint64_t> bytes(reads);
    // Distinct values, so "the" maximum of a stretch is one read.
    for (std::size_t i = 0; i < reads; ++i) bytes[i] = (rng.next() % 1'000'000) * 100'000 + i;
    constexpr std::uint64_t kSpike = std::uint64_t{1} << 50;
    const std::size_t spike_at = reads * 7 / 9;
    bytes[spike_at] = kSpike;  // one read, shorter than any stretch
    RssTimeline timeline(64);
    for (std::size_t i = 0; i < reads; ++i) timeline.add(static_cast<double>(i), bytes[i]);
    timeline.close(static_cast<double>(reads), 7);

    const auto points = timeline.points();
    const std::size_t stride = timeline.stride();
    ASSERT_GE(points.size(), 3u) << reads;
    EXPECT_EQ(points.front().seconds, 0.0);
    EXPECT_EQ(points.front().bytes, bytes[0]);
    EXPECT_EQ(points.back().seconds, static_cast<double>(reads));
    EXPECT_EQ(points.back().bytes, 7u);
    const std::size_t between = points.size() - 2;
    EXPECT_LE(between, 64u) << reads;
    if (stride > 1) {
      EXPECT_GE(between, 32u) << reads;  // merged at 64, filled since
    }
    for (std::size_t k = 0; k < between; ++k) {
      const std::size_t begin = 1 + k * stride, end = std::min(reads, begin + stride);
      ASSERT_LT(begin, reads) << reads;
      const auto top = std::max_element(bytes.begin() + begin, bytes.begin() + end);
      EXPECT_EQ(points[k + 1].bytes, *top) << reads << " point " << k;
      EXPECT_EQ(points[k + 1].seconds, static_cast<double>(top - bytes.begin())) << reads;
    }
    // Together the stretches cover every read between exactly once.
    EXPECT_GE(between * stride, reads - 1) << reads;
    EXPECT_LT((between - 1) * stride, reads - 1) << reads;
    const auto peak = std::max_element(points.begin(), points.end(),
                                       [](auto& a, auto& b) { return a.bytes < b.bytes; });
    EXPECT_EQ(peak->bytes, kSpike) << reads;
    EXPECT_EQ(peak->seconds, static_cast<double>(spike_at)) << reads;
  }
}

TEST(RssTimeline, AnOddCapacityIsRoundedDownToEven) {
  RssTimeline timeline(5);
  for (int i = 0; i < 5; ++i) timeline.add(i, 1);  // the first, then 4 that fill it
  EXPECT_EQ(timeline.stride(), 2u);                // merged to 2
  EXPECT_EQ(timeline.points().size(), 3u);
}

}  // namespace
}  // namespace heapscope::harness
