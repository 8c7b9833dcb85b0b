// Threads started together through the pthread_create wrapper (src/api/override_thread.cc),
// linked statically (heapscope_static): they are one batch, and any of them takes over the
// resident memory another left on exit, whichever was created first (core/thread.cc,
// reclaim_abandoned_resident). Threads the wrapper did not start are in no batch
// (stress/thread_rounds_test.cc has the same scene without it).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "../support/takeover_scene.h"

namespace {

// On two cores the last created threads of a pool often finish first, and the first created,
// still working, take the memory those left instead of faulting fresh pages in beside it (the
// `pool` row's peak). The second thread here is created after the first, and exits first.
TEST(ThreadBatch, AThreadTakesTheResidentMemoryASiblingStartedWithItLeft) {
  const hs_test::TakeoverScene scene =
      hs_test::run_takeover_scene(std::chrono::milliseconds(0), [] {});
  for (uintptr_t buffer : scene.first_thread_buffers) {
    EXPECT_EQ(buffer, scene.exited_segment)
        << "the first thread faulted fresh memory in beside what its sibling left resident";
  }
}

// Started 250 ms apart they are not a batch: the older thread leaves the exited one's
// segment to the next new thread (a main thread starting a worker per round, mstress).
TEST(ThreadBatch, ThreadsStartedApartAreNoBatch) {
  const hs_test::TakeoverScene scene =
      hs_test::run_takeover_scene(std::chrono::milliseconds(250), [] {});
  for (uintptr_t buffer : scene.first_thread_buffers) {
    EXPECT_NE(buffer, scene.exited_segment) << "the older thread took the exited one's segment";
  }
}

}  // namespace
