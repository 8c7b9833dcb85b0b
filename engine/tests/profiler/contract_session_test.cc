// The profiler's API contract, sessions: a start while running fails, stop clears counts and
// forgets samples, and the same seed gives the same samples.
#include <errno.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "contract_support.h"

namespace {

using namespace hs_prof_contract;

TEST_F(ProfContract, StartWhileRunningFailsAndLeavesTheSessionUnchanged) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 11));
  std::vector<void*> blocks;
  for (int i = 0; i < 10; ++i) blocks.push_back(hs_malloc(100));
  const hs_prof_stats_t before = prof_stats();
  ASSERT_EQ(before.live_samples, 10u);
  EXPECT_FALSE(hs_prof_start(0));
  EXPECT_FALSE(hs_prof_start_seeded(8192, 22));
  hs_prof_config_t c = full_struct(HS_PROF_OVERRIDE);
  EXPECT_FALSE(hs_prof_start_ex(&c));
  EXPECT_FALSE(hs_prof_start_ex(nullptr));
  hs_prof_stats_t after = prof_stats();
  EXPECT_EQ(after.enabled, 1);
  EXPECT_EQ(after.sample_interval, 1u);
  EXPECT_EQ(after.seed, 11u);
  EXPECT_EQ(after.accum, 0);
  EXPECT_EQ(after.max_bytes, 0u);
  EXPECT_EQ(after.max_stack_depth, before.max_stack_depth);
  EXPECT_EQ(after.live_samples, 10u);
  EXPECT_EQ(after.live_bytes, 1000u);
  EXPECT_EQ(after.total_samples, 10u);
  for (void* p : blocks) hs_free(p);
  EXPECT_EQ(prof_stats().live_samples, 0u);
}

// A session started by one thread reaches the others within 16 MiB of their allocations
// (docs/profiler.md), even when their last allocation before it was a huge block: the idle
// re-check after an allocation comes after 64 more of its size, but never beyond 16 MiB.
TEST_F(ProfContract, AThreadRunningWhenASessionStartsIsSampledWithin16MiB) {
  std::atomic<int> step{0};
  std::vector<void*> made;
  std::thread worker([&] {
    hs_free(hs_malloc(64u << 20));  // the last allocation before the session: 64 MiB
    step.store(1);
    while (step.load() != 2) std::this_thread::yield();
    for (int i = 0; i < 1536; ++i) made.push_back(hs_malloc(16 * 1024));  // 24 MiB
  });
  while (step.load() != 1) std::this_thread::yield();
  ASSERT_TRUE(hs_prof_start_seeded(4096, 21));  // about one sample per 4 KiB once armed
  step.store(2);
  worker.join();
  // At least the last 8 MiB are sampled: ~2000 samples expected; none if the worker never
  // looked at the session again.
  EXPECT_GE(prof_stats().live_samples, 500u);
  for (void* p : made) hs_free(p);
}

TEST_F(ProfContract, StopClearsCountsAndOldSamplesAreForgottenAcrossSessions) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 12));
  std::vector<void*> blocks;
  for (int i = 0; i < 64; ++i) blocks.push_back(alloc_distinct(i, i % 8, 96));
  hs_prof_stats_t s = prof_stats();
  ASSERT_EQ(s.live_samples, 64u);
  ASSERT_GT(s.unique_stacks, 1u);
  ASSERT_GT(s.profiler_bytes, 0u);
  hs_prof_stop();
  s = prof_stats();
  EXPECT_EQ(s.enabled, 0);
  EXPECT_FALSE(hs_prof_is_enabled());
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.live_bytes_estimate, 0.0);
  EXPECT_EQ(s.unique_stacks, 0u);
  EXPECT_EQ(hs_prof_test::visit_now().stacks, 0u);
  // A new session: the blocks sampled by the old one are not samples of this one, so freeing
  // them changes nothing (no underflow, no stale records).
  ASSERT_TRUE(hs_prof_start_seeded(1, 13));
  void* fresh = hs_malloc(50);
  for (void* p : blocks) hs_free(p);
  expect_one_live_sample_then_none(fresh, 50);
  EXPECT_EQ(prof_stats().unique_stacks, 0u);
}

TEST_F(ProfContract, SameSeedSameSamplesInProcessAndSeedZeroDrawsDistinctSeeds) {
  auto run = [](uint64_t seed, uint64_t* effective) {
    EXPECT_TRUE(hs_prof_start_seeded(4096, seed));
    std::vector<void*> blocks;
    std::vector<uint64_t> trace;
    hs_test::SplitMix64 sizes(31);
    for (int i = 0; i < 2000; ++i) {
      blocks.push_back(alloc_distinct(i, static_cast<int>(i % 5), sizes.between(16, 3000)));
      if (i % 100 == 99) trace.push_back(prof_stats().live_samples);
    }
    trace.push_back(prof_stats().live_bytes);
    *effective = prof_stats().seed;
    for (void* p : blocks) hs_free(p);
    hs_prof_stop();
    return trace;
  };
  uint64_t s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  std::vector<uint64_t> a = run(0xD5EED, &s1);
  std::vector<uint64_t> b = run(0xD5EED, &s2);
  EXPECT_EQ(a, b);
  EXPECT_EQ(s1, 0xD5EEDu);
  EXPECT_GT(a.front() + a.back(), 0u);
  std::vector<uint64_t> c = run(0, &s3);
  std::vector<uint64_t> d = run(0, &s4);
  EXPECT_NE(s3, 0u);
  EXPECT_NE(s4, 0u);
  EXPECT_NE(s3, s4);
  EXPECT_NE(c, d);
}

}  // namespace

// A failed allocation charges the sampler's countdown and is taken back out of the requested
// bytes, but must not postpone the next sample by its size: a failed 64 TiB request used to
// leave every later allocation of the thread unsampled.
TEST_F(ProfContract, AFailedAllocationDoesNotSilenceTheSampler) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 5));
  errno = 0;
  void* impossible = hs_malloc(size_t{1} << 46);
  ASSERT_EQ(impossible, nullptr);
  ASSERT_EQ(errno, ENOMEM);
  const uint64_t before = hs_prof_test::prof_stats().total_samples;
  void* blocks[100];
  for (void*& b : blocks) b = hs_malloc(48);
  EXPECT_EQ(hs_prof_test::prof_stats().total_samples - before, 100u)
      << "at a 1-byte interval every allocation is a sample";
  for (void* b : blocks) hs_free(b);
}
