// peak_live_bytes: the peak of requested-and-not-freed bytes, read from a stream.
#include "workloads/live_bytes.h"

#include <gtest/gtest.h>

#include "workloads/runner.h"
#include "workloads/workload.h"

namespace wl = heapscope::workloads;
using wl::Op;
using wl::OpKind;

namespace {

wl::Stream stream_of(std::initializer_list<Op> ops) {
  wl::StreamWriter w(ops.size(), 1);
  for (const Op op : ops) w.emit(op);
  return w.finish();
}

TEST(LiveBytes, FollowsMallocFreeReallocExactly) {
  // The running total after each op is on its right.
  const wl::Stream s = stream_of({Op::make(OpKind::kMalloc, 0, 100),    // 100
                                  Op::make(OpKind::kCalloc, 1, 200),    // 300
                                  Op::make(OpKind::kRealloc, 0, 1000),  // 1200 (peak)
                                  Op::make(OpKind::kFree, 1, 0),        // 1000
                                  Op::make(OpKind::kRealloc, 0, 10),    // 10
                                  Op::make(OpKind::kAligned, 2, 500),   // 510
                                  Op::make(OpKind::kFree, 0, 0),        // 500
                                  Op::make(OpKind::kFree, 2, 0)});      // 0
  EXPECT_EQ(wl::peak_live_bytes(s), 1200u);
}

TEST(LiveBytes, HandoffBlocksLeaveTheSenderAtOnce) {
  const wl::Stream s =
      stream_of({Op::make(OpKind::kSend, 0, 4000, 0), Op::make(OpKind::kMalloc, 0, 64)});
  EXPECT_EQ(wl::peak_live_bytes(s), 64u);
}

// Workers' peaks add up; the same for a cell's streams however often it is materialized.
TEST(LiveBytes, SumsWorkersAndIsDeterministic) {
  const wl::WorkloadSpec& spec = *wl::find_workload("general-mix");
  const wl::Materialized a = wl::materialize(spec, 2, 20000, 3, 0);
  const wl::Materialized b = wl::materialize(spec, 2, 20000, 3, 0);
  EXPECT_EQ(wl::peak_live_bytes(a.streams),
            wl::peak_live_bytes(a.streams[0]) + wl::peak_live_bytes(a.streams[1]));
  EXPECT_EQ(wl::peak_live_bytes(a.streams), wl::peak_live_bytes(b.streams));
  EXPECT_GT(wl::peak_live_bytes(a.streams[0]), 0u);
}

}  // namespace
