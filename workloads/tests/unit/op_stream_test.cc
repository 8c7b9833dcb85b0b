#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "workloads/op.h"
#include "workloads/runner.h"
#include "workloads/size_draw.h"
#include "workloads/workload.h"

namespace wl = heapscope::workloads;

TEST(Op, RoundTripsEveryField) {
  const auto op = wl::Op::make(wl::OpKind::kAligned, wl::kMaxSlots - 1, 4u << 20, 63, 12);
  EXPECT_EQ(op.kind(), wl::OpKind::kAligned);
  EXPECT_EQ(op.slot(), wl::kMaxSlots - 1);
  EXPECT_EQ(op.size(), 4u << 20);
  EXPECT_EQ(op.target(), 63u);
  EXPECT_EQ(op.align_log2(), 12u);
}

TEST(SizeDraw, LogUniformStaysInRangeWithEqualOctaves) {
  heapscope::base::SplitMix64 rng(3);
  std::array<int, 12> octave{};
  const int draws = 90000;
  for (int i = 0; i < draws; ++i) {
    const auto s = wl::log_uniform_size(rng, 8, 4096);
    ASSERT_GE(s, 8u);
    ASSERT_LT(s, 4096u);
    ++octave[std::bit_width(s) - 1];
  }
  const double p = 1.0 / 9;  // octaves 3..11
  const double se = std::sqrt(p * (1 - p) / draws);
  for (int k = 3; k <= 11; ++k) EXPECT_NEAR(octave[k] / double(draws), p, 4.5 * se) << k;
  for (int i = 0; i < 1000; ++i) {
    const auto s = wl::log_uniform_size(rng, 64 << 10, 4 << 20);
    ASSERT_GE(s, 64u << 10);
    ASSERT_LT(s, 4u << 20);
  }
}

TEST(Registry, FindsEveryWorkloadByName) {
  EXPECT_EQ(wl::all_workloads().size(), 10u);
  for (const auto& w : wl::all_workloads()) EXPECT_EQ(wl::find_workload(w.name), &w);
  EXPECT_EQ(wl::find_workload("nope"), nullptr);
}

// Materializing twice gives the same digest; the call accounting matches a recount of
// the ops and the requested budget (within one generator step's overshoot).
TEST(Materialize, DeterministicAndAccountedForEveryWorkload) {
  for (const auto& w : wl::all_workloads()) {
    for (unsigned threads : {1u, 3u}) {
      const auto a = wl::materialize(w, threads, 20000, 5, 1);
      const auto b = wl::materialize(w, threads, 20000, 5, 1);
      EXPECT_EQ(a.digest, b.digest) << w.name;
      EXPECT_EQ(a.calls, b.calls) << w.name;
      wl::CallCounts recount;
      for (const auto& s : a.streams) {
        for (std::size_t i = s.timed_begin; i < s.timed_end; ++i) {
          switch (s.ops[i].kind()) {
            case wl::OpKind::kMalloc:
              ++recount.malloc;
              break;
            case wl::OpKind::kFree:
              ++recount.free;
              break;
            case wl::OpKind::kRealloc:
              ++recount.realloc;
              break;
            case wl::OpKind::kCalloc:
              ++recount.calloc;
              break;
            case wl::OpKind::kAligned:
              ++recount.aligned;
              break;
            case wl::OpKind::kSend:
              ++recount.malloc;
              ++recount.free;
              break;
            default:
              break;
          }
        }
      }
      EXPECT_EQ(recount, a.calls) << w.name;
      EXPECT_GE(a.calls.total() + 2 * threads, 20000u) << w.name;
      EXPECT_LE(a.calls.total(), 20000u + 20000u) << w.name;  // sawtooth drains overshoot most
      EXPECT_NE(a.digest, wl::materialize(w, threads, 20000, 6, 1).digest) << w.name;
    }
  }
}

// Frees in the timed section only ever target an occupied slot (a replay cannot
// double-free whatever the allocator returns), and teardown leaves nothing live.
TEST(Materialize, StreamsAreWellFormed) {
  for (const auto& w : wl::all_workloads()) {
    const auto m = wl::materialize(w, 2, 30000, 9, 0);
    for (const auto& s : m.streams) {
      std::vector<bool> live(s.slots, false);
      for (std::size_t i = 0; i < s.size; ++i) {
        const wl::Op op = s.ops[i];
        switch (op.kind()) {
          case wl::OpKind::kMalloc:
          case wl::OpKind::kCalloc:
          case wl::OpKind::kAligned:
            ASSERT_FALSE(live[op.slot()]) << w.name << " op " << i;
            live[op.slot()] = true;
            ASSERT_GT(op.size(), 0u);
            break;
          case wl::OpKind::kFree:
          case wl::OpKind::kRealloc:
            ASSERT_TRUE(live[op.slot()]) << w.name << " op " << i;
            live[op.slot()] = op.kind() == wl::OpKind::kRealloc;
            break;
          default:
            break;
        }
      }
      for (std::size_t i = 0; i < live.size(); ++i)
        EXPECT_FALSE(live[i]) << w.name << " slot " << i;
    }
  }
}
