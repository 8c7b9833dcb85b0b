// The profiler's API contract, the memory budget: drops are counted, memory is reused, allocations
// always succeed, page bitmaps count against it, and a new session starts with its whole budget.
#include "contract_support.h"

namespace {

using namespace hs_prof_contract;

// Allocates kBudgetAllocs blocks from many distinct stacks at interval 1 under a budget and
// returns the blocks; `peak` gets the largest profiler_bytes seen along the way.
constexpr int kBudgetAllocs = 6000;

std::vector<void*> allocate_under_budget(uint64_t budget, uint64_t* peak) {
  hs_prof_config_t c = HS_PROF_CONFIG_INIT;
  c.mode = HS_PROF_OVERRIDE;
  c.fields = HS_PROF_FIELD_SAMPLE_INTERVAL | HS_PROF_FIELD_MAX_BYTES | HS_PROF_FIELD_STACK_DEPTH;
  c.sample_interval = 1;  // every allocation is a sample
  c.max_bytes = budget;
  c.max_stack_depth = 64;
  std::vector<void*> blocks;
  EXPECT_TRUE(hs_prof_start_ex(&c));
  EXPECT_EQ(prof_stats().max_bytes, budget);
  *peak = 0;
  for (int i = 0; i < kBudgetAllocs; ++i) {
    void* p = alloc_distinct(i, (i / 4) % 60, 64 + static_cast<size_t>(i % 7) * 16);
    EXPECT_NE(p, nullptr) << "the application's allocation must always succeed";
    if (p == nullptr) break;
    std::memset(p, 0x5a, 64);
    blocks.push_back(p);
    if (i % 256 == 0) *peak = std::max(*peak, prof_stats().profiler_bytes);
  }
  *peak = std::max(*peak, prof_stats().profiler_bytes);
  return blocks;
}

TEST_F(ProfContract, BudgetCountsDropsReusesMemoryAndAllocationsSucceed) {
  constexpr uint64_t kBudget = 256 * 1024;
  uint64_t peak = 0;
  std::vector<void*> blocks = allocate_under_budget(kBudget, &peak);
  ASSERT_EQ(blocks.size(), static_cast<size_t>(kBudgetAllocs));
  hs_prof_stats_t s = prof_stats();
  EXPECT_GT(s.dropped_no_memory, 0u);
  EXPECT_GE(s.dropped_samples, s.dropped_no_memory);
  EXPECT_GT(s.live_samples, 0u) << "a budget of 4 chunks should hold some samples";
  EXPECT_EQ(s.live_samples + s.dropped_samples, static_cast<uint64_t>(kBudgetAllocs))
      << "at interval 1 every allocation is either recorded or counted as dropped";
  hs_prof_test::VisitSums sums = hs_prof_test::visit_now();
  EXPECT_EQ(sums.live_objects, s.live_samples);
  EXPECT_GT(sums.stacks, 1u);
  for (void* p : blocks) hs_free(p);
  blocks.clear();
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
  // A second round: drops keep growing, memory stays bounded.
  const uint64_t dropped_first = s.dropped_no_memory;
  const uint64_t bytes_first = s.profiler_bytes;
  for (int i = 0; i < kBudgetAllocs; ++i) {
    void* p = alloc_distinct(i + 1, (i / 3) % 61, 80);
    ASSERT_NE(p, nullptr);
    blocks.push_back(p);
  }
  s = prof_stats();
  EXPECT_GT(s.dropped_no_memory, dropped_first);
  EXPECT_GT(s.live_samples, 0u);
  // Records and stacks are reused; new size classes may add a chunk of page bitmaps.
  EXPECT_LE(s.profiler_bytes, bytes_first + 64 * 1024);
  for (void* p : blocks) hs_free(p);
  EXPECT_EQ(prof_stats().live_samples, 0u);
}

// A budget of a single 64 KiB chunk: everything still succeeds and every drop is counted.
TEST_F(ProfContract, TinyBudgetDropsAreCountedAndAllocationsSucceed) {
  uint64_t peak = 0;
  std::vector<void*> blocks = allocate_under_budget(64 * 1024, &peak);
  ASSERT_EQ(blocks.size(), static_cast<size_t>(kBudgetAllocs));
  hs_prof_stats_t s = prof_stats();
  std::printf("[budget] 64 KiB: live %llu dropped %llu profiler_bytes %llu\n",
              static_cast<unsigned long long>(s.live_samples),
              static_cast<unsigned long long>(s.dropped_no_memory),
              static_cast<unsigned long long>(s.profiler_bytes));
  EXPECT_GT(s.dropped_no_memory, 0u);
  EXPECT_EQ(s.live_samples + s.dropped_samples, static_cast<uint64_t>(kBudgetAllocs));
  for (void* p : blocks) hs_free(p);
  EXPECT_EQ(prof_stats().live_samples, 0u);
}

// A live sample flags its page, so every free of the page's other blocks takes a slower path;
// the owner's frees there finish without touching the profiler once the page's bitmap says
// the block is not a sample. Those frees must leave the sample live (and count as frees),
// and the sample's own free must still find its record.
TEST_F(ProfContract, FreesOfOtherBlocksOnASampledPageLeaveTheSampleLive) {
  ASSERT_TRUE(hs_prof_start_seeded(16 * 1024, 7));
  std::vector<void*> others;
  void* sample = nullptr;
  for (int i = 0; i < 100000 && sample == nullptr; ++i) {
    const uint64_t live_before = prof_stats().live_samples;
    void* p = hs_malloc(48);
    ASSERT_NE(p, nullptr);
    if (prof_stats().live_samples == live_before + 1) {
      sample = p;
    } else {
      others.push_back(p);
    }
  }
  ASSERT_NE(sample, nullptr) << "no 48-byte allocation was sampled at a 16 KiB interval";
  // Blocks carved after the sample share its page too (some may be samples themselves).
  for (int i = 0; i < 200; ++i) others.push_back(hs_malloc(48));
  const hs_stats_t before = hs_test::stats_now();
  for (void* p : others) hs_free(p);
  const hs_stats_t after = hs_test::stats_now();
  EXPECT_EQ(after.free_count - before.free_count, others.size());
  expect_one_live_sample_then_none(sample, 48);
}

// From a 64 KiB mean interval up, a sampled block of a shared-page class is served from a page
// of its own (one 64 KiB slice, the block at its start), so no other block's free ever meets
// the page's "holds a sample" flag. Its usable size stays its class's.
TEST_F(ProfContract, SampledSmallBlocksGetPagesOfTheirOwnAtDefaultLikeIntervals) {
  ASSERT_TRUE(hs_prof_start_seeded(64 * 1024, 11));
  std::vector<void*> others;
  std::vector<void*> samples;
  for (int i = 0; i < 200000 && samples.size() < 3; ++i) {
    const uint64_t live_before = prof_stats().live_samples;
    void* p = hs_malloc(100);
    ASSERT_NE(p, nullptr);
    (prof_stats().live_samples == live_before + 1 ? samples : others).push_back(p);
  }
  ASSERT_EQ(samples.size(), 3u) << "too few 100-byte samples at a 64 KiB interval";
  constexpr uintptr_t kSlice = 64 * 1024;
  for (void* sample : samples) {
    const auto address = reinterpret_cast<uintptr_t>(sample);
    EXPECT_EQ(address % kSlice, 0u) << "a sampled block should start a page of its own";
    for (void* other : others) {
      EXPECT_NE(reinterpret_cast<uintptr_t>(other) / kSlice, address / kSlice);
    }
    EXPECT_EQ(hs_usable_size(sample), hs_usable_size(others.front()));
  }
  for (void* p : others) hs_free(p);
  EXPECT_EQ(prof_stats().live_samples, 3u);
  for (void* p : samples) hs_free(p);
  EXPECT_EQ(prof_stats().live_samples, 0u);
}

// Regression (fixed in efb6301): HEAPSCOPE_PROF_MAX_BYTES / max_bytes bounded only the
// records/stacks/tables memory, while the per-page sampled-block bitmaps (never released, not
// budgeted) were counted in profiler_bytes too, which then exceeded max_bytes
// (engine/docs/design.md#profiler-contract: "MAX_BYTES bounds it").
TEST_F(ProfContract, ProfilerBytesNeverExceedMaxBytesPageBitmapsIncluded) {
  constexpr uint64_t kBudget = 256 * 1024;
  uint64_t peak = 0;
  std::vector<void*> blocks = allocate_under_budget(kBudget, &peak);
  EXPECT_LE(peak, kBudget) << "profiler_bytes " << peak << " > max_bytes " << kBudget;
  for (void* p : blocks) hs_free(p);
}

// Page bitmaps outlive sessions (pages keep pointing at them). Whatever an earlier, unbudgeted
// session left behind must not use up a later session's budget: a 256 KiB budget still
// records samples after a session that sampled blocks on ~500 pages.
// Regression: idle bitmaps (on the free list) once counted against the budget, so the ~300 KiB
// left by the first session exceeded the second session's whole budget (6000 drops).
TEST_F(ProfContract, BudgetOfANewSessionIsNotUsedUpByAnEarlierSessionsBitmaps) {
  ASSERT_TRUE(hs_prof_start_seeded(65536, 81));
  std::vector<void*> blocks;
  for (int i = 0; i < 600; ++i) blocks.push_back(hs_malloc(128 * 1024));  // a page each
  EXPECT_GT(prof_stats().live_samples, 400u);
  for (void* p : blocks) hs_free(p);
  blocks.clear();
  hs_prof_stop();
  uint64_t peak = 0;
  blocks = allocate_under_budget(256 * 1024, &peak);
  hs_prof_stats_t s = prof_stats();
  EXPECT_GT(s.live_samples, 0u) << "profiler_bytes " << s.profiler_bytes << ", dropped "
                                << s.dropped_no_memory;
  for (void* p : blocks) hs_free(p);
}

TEST_F(ProfContract, BudgetFromTheEnvironment) {
  ScopedEnv budget("HEAPSCOPE_PROF_MAX_BYTES", "131072");
  ASSERT_TRUE(hs_prof_start(1));
  EXPECT_EQ(prof_stats().max_bytes, 131072u);
  std::vector<void*> blocks;
  for (int i = 0; i < 4000; ++i) {
    void* p = alloc_distinct(i, i % 40, 48);
    ASSERT_NE(p, nullptr);
    blocks.push_back(p);
  }
  hs_prof_stats_t s = prof_stats();
  EXPECT_GT(s.dropped_no_memory, 0u);
  EXPECT_EQ(s.live_samples + s.dropped_samples, 4000u);
  for (void* p : blocks) hs_free(p);
  EXPECT_EQ(prof_stats().live_samples, 0u);
}

}  // namespace
