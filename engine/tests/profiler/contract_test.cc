// The profiler's API contract, through heapscope/profile.h only: size/version-tagged stats and
// config, FALLBACK/OVERRIDE per field against the environment, sessions (start while running,
// stop), the memory budget and its drops, reentrant visitors, empty profiles, first-class heap
// destroy/delete, realloc in place and moving, and the pluggable profilers (hs_profiler_t and
// the pprof profiler object). Linked with heapscope_api; allocations go through hs_*.
// Built with -fno-omit-frame-pointer so recursion depth gives distinct stacks.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../support/test_support.h"
#include "behaviour_support.h"

namespace {

using hs_prof_test::prof_stats;
using hs_prof_test::ScopedEnv;

// Allocates `size` bytes `depth` frames below the caller: each depth is a distinct stack.
__attribute__((noinline, noclone)) void* alloc_at_depth(int depth, size_t size) {
  if (depth <= 0) return hs_test::opaque(hs_malloc(size));
  void* p = alloc_at_depth(depth - 1, size);
  asm volatile("" : "+r"(p)::"memory");  // not a tail call: this frame stays on the stack
  return p;
}

// Four call sites (distinct return addresses) times recursion depth.
__attribute__((noinline, noclone)) void* alloc_distinct(int site, int depth, size_t size) {
  void* p = nullptr;
  switch (site & 3) {
    case 0:
      p = alloc_at_depth(depth, size);
      break;
    case 1:
      p = alloc_at_depth(depth, size + 1);
      break;
    case 2:
      p = alloc_at_depth(depth, size + 2);
      break;
    default:
      p = alloc_at_depth(depth, size + 3);
      break;
  }
  asm volatile("" : "+r"(p)::"memory");
  return p;
}

// Every HEAPSCOPE_PROF_* variable the start functions read, unset for the test's duration.
class CleanProfEnv {
 public:
  CleanProfEnv()
      : a_("HEAPSCOPE_PROF_SAMPLE_INTERVAL", nullptr),
        b_("HEAPSCOPE_PROF_MAX_BYTES", nullptr),
        c_("HEAPSCOPE_PROF_SEED", nullptr),
        d_("HEAPSCOPE_PROF_ACCUM", nullptr),
        e_("HEAPSCOPE_PROF_BT_MAX", nullptr),
        f_("HEAPSCOPE_PROF_DUMP_FORMAT", nullptr) {}

 private:
  ScopedEnv a_, b_, c_, d_, e_, f_;
};

// `sample` (of `bytes` requested) is the only live sample; freeing it leaves none.
void expect_one_live_sample_then_none(void* sample, uint64_t bytes) {
  hs_prof_stats_t s = prof_stats();
  EXPECT_EQ(s.live_samples, 1u);
  EXPECT_EQ(s.live_bytes, bytes);
  hs_free(sample);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
}

class ProfContract : public ::testing::Test {
 protected:
  void SetUp() override {
    hs_prof_stop();
    ASSERT_FALSE(hs_prof_is_enabled());
  }
  void TearDown() override { hs_prof_stop(); }
  CleanProfEnv clean_env_;
};

// ---- statistics struct ----------------------------------------------------------------------

TEST_F(ProfContract, StatsRejectsNullSmallSizeAndUnknownVersionWithoutWriting) {
  ASSERT_TRUE(hs_prof_start_seeded(4096, 99));
  EXPECT_FALSE(hs_prof_stats_get(nullptr));
  struct Case {
    size_t size;
    uint32_t version;
  };
  for (Case c : {Case{sizeof(hs_prof_stats_t) - 1, HS_PROF_STATS_VERSION},
                 Case{sizeof(size_t) + sizeof(uint32_t), HS_PROF_STATS_VERSION}, Case{0, 1},
                 Case{sizeof(hs_prof_stats_t), 0}, Case{sizeof(hs_prof_stats_t), 99},
                 Case{sizeof(hs_prof_stats_t), HS_PROF_STATS_VERSION + 1}}) {
    unsigned char buffer[sizeof(hs_prof_stats_t) + 64];
    std::memset(buffer, 0xAB, sizeof buffer);
    hs_prof_stats_t header;
    header.size = c.size;
    header.version = c.version;
    std::memcpy(buffer, &header.size, sizeof header.size);
    std::memcpy(buffer + offsetof(hs_prof_stats_t, version), &header.version,
                sizeof header.version);
    unsigned char before[sizeof buffer];
    std::memcpy(before, buffer, sizeof buffer);
    EXPECT_FALSE(hs_prof_stats_get(reinterpret_cast<hs_prof_stats_t*>(buffer)))
        << "size " << c.size << " version " << c.version;
    EXPECT_EQ(std::memcmp(before, buffer, sizeof buffer), 0)
        << "a refused call wrote into the struct (size " << c.size << ")";
  }
}

TEST_F(ProfContract, StatsNeverWritesPastTheStructIntoAPoisonedTail) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 4242));
  void* p = hs_malloc(200);  // interval 1: certainly sampled
  ASSERT_NE(p, nullptr);
  // A caller whose (future) header declares a larger struct: only the fields this library
  // knows are written, the tail stays poisoned. The API refuses any size smaller than the
  // version-1 struct (the first published one), so no smaller "old" size can be crafted.
  constexpr size_t kTail = 48;
  unsigned char buffer[sizeof(hs_prof_stats_t) + kTail];
  std::memset(buffer, 0xAB, sizeof buffer);
  auto* s = reinterpret_cast<hs_prof_stats_t*>(buffer);
  s->size = sizeof buffer;
  s->version = HS_PROF_STATS_VERSION;
  ASSERT_TRUE(hs_prof_stats_get(s));
  for (size_t i = sizeof(hs_prof_stats_t); i < sizeof buffer; ++i) {
    ASSERT_EQ(buffer[i], 0xAB) << "byte " << i << " past the struct was written";
  }
  hs_prof_stats_t copy;
  std::memcpy(&copy, buffer, sizeof copy);
  EXPECT_EQ(copy.enabled, 1);
  EXPECT_EQ(copy.sample_interval, 1u);
  EXPECT_EQ(copy.seed, 4242u);
  EXPECT_EQ(copy.live_samples, 1u);
  EXPECT_EQ(copy.live_bytes, 200u);
  EXPECT_EQ(copy.unique_stacks, 1u);
  EXPECT_EQ(copy.total_samples, 1u);
  hs_free(p);
}

// ---- configuration ---------------------------------------------------------------------------

TEST_F(ProfContract, NullAndZeroedConfigStartLikeStartZero) {
  hs_prof_config_t config = HS_PROF_CONFIG_INIT;
  ASSERT_TRUE(hs_prof_start_ex(&config));
  hs_prof_stats_t s = prof_stats();
  EXPECT_EQ(s.enabled, 1);
  EXPECT_EQ(s.sample_interval, uint64_t{HS_PROF_DEFAULT_INTERVAL});
  EXPECT_EQ(s.max_stack_depth, HS_PROF_DEFAULT_STACK_DEPTH);
  EXPECT_EQ(s.accum, 0);
  EXPECT_EQ(s.max_bytes, 0u);
  EXPECT_NE(s.seed, 0u) << "seed 0 draws a (nonzero) session seed";
  hs_prof_stop();
  ASSERT_TRUE(hs_prof_start_ex(nullptr));
  s = prof_stats();
  EXPECT_EQ(s.sample_interval, uint64_t{HS_PROF_DEFAULT_INTERVAL});
  EXPECT_EQ(s.max_stack_depth, HS_PROF_DEFAULT_STACK_DEPTH);
  hs_prof_stop();
  // hs_prof_start(0) with the environment's interval.
  ScopedEnv interval("HEAPSCOPE_PROF_SAMPLE_INTERVAL", "3000");
  ASSERT_TRUE(hs_prof_start_ex(&config));
  EXPECT_EQ(prof_stats().sample_interval, 3000u);
  hs_prof_stop();
  ASSERT_TRUE(hs_prof_start(0));
  EXPECT_EQ(prof_stats().sample_interval, 3000u);
  hs_prof_stop();
  ASSERT_TRUE(hs_prof_start(4096));  // an explicit interval ignores the environment
  EXPECT_EQ(prof_stats().sample_interval, 4096u);
}

TEST_F(ProfContract, InvalidConfigReturnsFalseWithoutSideEffects) {
  ASSERT_TRUE(hs_prof_start_seeded(8192, 77));
  hs_prof_stop();
  const hs_prof_stats_t before = prof_stats();
  auto valid = [] {
    hs_prof_config_t c = HS_PROF_CONFIG_INIT;
    c.mode = HS_PROF_OVERRIDE;
    c.fields = HS_PROF_FIELD_SAMPLE_INTERVAL | HS_PROF_FIELD_SEED;
    c.sample_interval = 1234;
    c.seed = 5;
    return c;
  };
  // Each case: the valid config with one thing broken.
  std::vector<std::pair<const char*, hs_prof_config_t>> cases;
  auto broken = [&](const char* name, auto&& breaks) {
    hs_prof_config_t c = valid();
    breaks(c);
    cases.emplace_back(name, c);
  };
  broken("size - 1", [](hs_prof_config_t& c) { c.size = sizeof(hs_prof_config_t) - 1; });
  broken("size 8", [](hs_prof_config_t& c) { c.size = 8; });
  broken("version 0", [](hs_prof_config_t& c) { c.version = 0; });
  broken("version 999", [](hs_prof_config_t& c) { c.version = 999; });
  broken("version + 1", [](hs_prof_config_t& c) { c.version = HS_PROF_CONFIG_VERSION + 1; });
  broken("mode 7", [](hs_prof_config_t& c) { c.mode = 7; });
  broken("interval 0 given", [](hs_prof_config_t& c) { c.sample_interval = 0; });
  broken("depth 0 given", [](hs_prof_config_t& c) {
    c.fields |= HS_PROF_FIELD_STACK_DEPTH;
    c.max_stack_depth = 0;
  });
  broken("format 9", [](hs_prof_config_t& c) {
    c.fields |= HS_PROF_FIELD_DUMP_FORMAT;
    c.dump_format = 9;
  });
  for (const auto& [name, config] : cases) {
    EXPECT_FALSE(hs_prof_start_ex(&config)) << name;
    EXPECT_FALSE(hs_prof_is_enabled()) << name;
    hs_prof_stats_t after = prof_stats();
    EXPECT_EQ(after.enabled, 0) << name;
    EXPECT_EQ(after.sample_interval, before.sample_interval) << name;
    EXPECT_EQ(after.seed, before.seed) << name;
  }
  hs_prof_config_t ok = valid();
  ASSERT_TRUE(hs_prof_start_ex(&ok));
  EXPECT_EQ(prof_stats().sample_interval, 1234u);
  EXPECT_EQ(prof_stats().seed, 5u);
}

struct ResolvedConfig {
  uint64_t interval, max_bytes, seed;
  int accum;
  int depth;
};

ResolvedConfig start_and_read(const hs_prof_config_t& config) {
  hs_prof_stop();
  if (!hs_prof_start_ex(&config)) return ResolvedConfig{0, 0, 0, -1, -1};
  hs_prof_stats_t s = prof_stats();
  hs_prof_stop();
  return ResolvedConfig{s.sample_interval, s.max_bytes, s.seed, s.accum, s.max_stack_depth};
}

hs_prof_config_t full_struct(uint32_t mode) {
  hs_prof_config_t c = HS_PROF_CONFIG_INIT;
  c.mode = mode;
  c.fields = HS_PROF_FIELD_SAMPLE_INTERVAL | HS_PROF_FIELD_MAX_BYTES | HS_PROF_FIELD_SEED |
             HS_PROF_FIELD_ACCUM | HS_PROF_FIELD_STACK_DEPTH;
  c.sample_interval = 2048;
  c.max_bytes = 1 << 20;
  c.seed = 999;
  c.accum = 1;
  c.max_stack_depth = 21;
  return c;
}

TEST_F(ProfContract, FallbackEnvironmentWinsOverrideStructWinsFieldByField) {
  ScopedEnv interval("HEAPSCOPE_PROF_SAMPLE_INTERVAL", "1000");
  ScopedEnv depth("HEAPSCOPE_PROF_BT_MAX", "7");
  ScopedEnv budget("HEAPSCOPE_PROF_MAX_BYTES", "65536");
  ScopedEnv accum("HEAPSCOPE_PROF_ACCUM", "0");
  ScopedEnv seed("HEAPSCOPE_PROF_SEED", "777");

  ResolvedConfig r = start_and_read(full_struct(HS_PROF_FALLBACK));
  EXPECT_EQ(r.interval, 1000u);
  EXPECT_EQ(r.depth, 7);
  EXPECT_EQ(r.max_bytes, 65536u);
  EXPECT_EQ(r.accum, 0);
  EXPECT_EQ(r.seed, 777u);

  r = start_and_read(full_struct(HS_PROF_OVERRIDE));
  EXPECT_EQ(r.interval, 2048u);
  EXPECT_EQ(r.depth, 21);
  EXPECT_EQ(r.max_bytes, uint64_t{1} << 20);
  EXPECT_EQ(r.accum, 1);
  EXPECT_EQ(r.seed, 999u);

  // FALLBACK with single fields made OVERRIDE.
  hs_prof_config_t c = full_struct(HS_PROF_FALLBACK);
  c.override_fields = HS_PROF_FIELD_SAMPLE_INTERVAL | HS_PROF_FIELD_ACCUM;
  r = start_and_read(c);
  EXPECT_EQ(r.interval, 2048u);
  EXPECT_EQ(r.accum, 1);
  EXPECT_EQ(r.depth, 7);
  EXPECT_EQ(r.max_bytes, 65536u);
  EXPECT_EQ(r.seed, 777u);

  // OVERRIDE takes only the fields given; the others come from the environment.
  c = HS_PROF_CONFIG_INIT;
  c.mode = HS_PROF_OVERRIDE;
  c.fields = HS_PROF_FIELD_STACK_DEPTH;
  c.max_stack_depth = 9;
  r = start_and_read(c);
  EXPECT_EQ(r.depth, 9);
  EXPECT_EQ(r.interval, 1000u);
  EXPECT_EQ(r.max_bytes, 65536u);
  EXPECT_EQ(r.seed, 777u);

  // Zero values can be requested explicitly: accum 0 and max_bytes 0 over ACCUM=1/MAX_BYTES.
  ScopedEnv accum_on("HEAPSCOPE_PROF_ACCUM", "1");
  c = HS_PROF_CONFIG_INIT;
  c.mode = HS_PROF_OVERRIDE;
  c.fields = HS_PROF_FIELD_ACCUM | HS_PROF_FIELD_MAX_BYTES;
  c.accum = 0;
  c.max_bytes = 0;
  r = start_and_read(c);
  EXPECT_EQ(r.accum, 0);
  EXPECT_EQ(r.max_bytes, 0u);
  c.mode = HS_PROF_FALLBACK;
  r = start_and_read(c);
  EXPECT_EQ(r.accum, 1);
  EXPECT_EQ(r.max_bytes, 65536u);

  // Depth above the cap is clamped.
  c = HS_PROF_CONFIG_INIT;
  c.mode = HS_PROF_OVERRIDE;
  c.fields = HS_PROF_FIELD_STACK_DEPTH;
  c.max_stack_depth = 1000;
  EXPECT_EQ(start_and_read(c).depth, HS_PROF_MAX_STACK_DEPTH);
}

TEST_F(ProfContract, FallbackStructFillsGapsWhenTheEnvironmentIsUnset) {
  ResolvedConfig r = start_and_read(full_struct(HS_PROF_FALLBACK));
  EXPECT_EQ(r.interval, 2048u);
  EXPECT_EQ(r.depth, 21);
  EXPECT_EQ(r.max_bytes, uint64_t{1} << 20);
  EXPECT_EQ(r.accum, 1);
  EXPECT_EQ(r.seed, 999u);
  // A malformed variable counts as unset.
  ScopedEnv interval("HEAPSCOPE_PROF_SAMPLE_INTERVAL", "12k");
  r = start_and_read(full_struct(HS_PROF_FALLBACK));
  EXPECT_EQ(r.interval, 2048u);
}

// ---- sessions ----------------------------------------------------------------------------------

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

// ---- the memory budget ---------------------------------------------------------------------

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
// budgeted) were counted in profiler_bytes too, which then exceeded max_bytes (spec §2:
// "MAX_BYTES bounds it").
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

// ---- visitors ----------------------------------------------------------------------------------

struct ReentrantVisit {
  void* sampled = nullptr;  // freed by the visitor
  void* kept = nullptr;     // allocated by the visitor, freed after
  int calls = 0;
  bool start = true, start_seeded = true, start_ex = true, dump = true, dump_writer = true;
  bool dump_proto_writer = true, visit = true, snapshot = true, stats = true, modules = true;
  bool still_enabled_after_stop = false;
  uint64_t samples_before_reset = 0;
};

bool nested_visit(const hs_prof_sample_info_t*, void*) { return true; }
bool nested_module(const hs_prof_module_info_t*, void*) { return true; }

bool reentrant_visitor(const hs_prof_sample_info_t*, void* arg) {
  auto* v = static_cast<ReentrantVisit*>(arg);
  if (v->calls++ != 0) return true;
  void* scratch = hs_malloc(4096);  // interval 1: would be a sample outside a visitor
  std::memset(scratch, 1, 4096);
  hs_free(scratch);
  v->kept = hs_malloc(777);
  hs_free(v->sampled);  // a sampled block, freed while the visit holds the profiler lock
  v->sampled = nullptr;
  v->start = hs_prof_start(64);
  v->start_seeded = hs_prof_start_seeded(64, 1);
  v->start_ex = hs_prof_start_ex(nullptr);
  v->dump = hs_prof_dump("/dev/null");
  std::string sink;
  v->dump_writer = hs_prof_dump_writer(hs_prof_test::append_writer, &sink);
  v->dump_proto_writer = hs_prof_dump_proto_writer(hs_prof_test::append_writer, &sink);
  v->visit = hs_prof_visit(nested_visit, nullptr);
  hs_prof_snapshot_t* snapshot = hs_prof_snapshot_new();
  v->snapshot = snapshot != nullptr;
  hs_prof_snapshot_free(snapshot);
  v->modules = hs_prof_modules_visit(nested_module, nullptr);
  hs_prof_stop();  // must do nothing from here
  hs_prof_reset();
  v->still_enabled_after_stop = hs_prof_is_enabled();
  return true;
}

TEST_F(ProfContract, VisitorMayAllocateAndFreeSampledBlocksAndNestedCallsFailFast) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 5));
  ReentrantVisit v;
  v.sampled = alloc_distinct(0, 3, 64 * 1024);
  void* other = alloc_distinct(1, 1, 300);
  const hs_prof_stats_t before = prof_stats();
  ASSERT_EQ(before.live_samples, 2u);
  ASSERT_EQ(before.live_bytes, 64u * 1024 + 301);
  ASSERT_TRUE(hs_prof_visit(reentrant_visitor, &v));
  EXPECT_GE(v.calls, 1);
  EXPECT_EQ(v.sampled, nullptr);
  EXPECT_FALSE(v.start);
  EXPECT_FALSE(v.start_seeded);
  EXPECT_FALSE(v.start_ex);
  EXPECT_FALSE(v.dump);
  EXPECT_FALSE(v.dump_writer);
  EXPECT_FALSE(v.dump_proto_writer);
  EXPECT_FALSE(v.visit);
  EXPECT_FALSE(v.snapshot);
  EXPECT_FALSE(v.modules);
  EXPECT_TRUE(v.still_enabled_after_stop);
  hs_prof_stats_t after = prof_stats();
  EXPECT_EQ(after.enabled, 1);
  EXPECT_EQ(after.sample_interval, 1u) << "a nested start must not change the session";
  EXPECT_EQ(after.seed, 5u);
  EXPECT_EQ(after.live_samples, 1u) << "the freed sample is gone, the visitor's own blocks "
                                       "were not sampled";
  EXPECT_EQ(after.live_bytes, 301u);
  EXPECT_EQ(after.unique_stacks, 1u) << "the emptied stack is released after the visit";
  hs_prof_test::VisitSums sums = hs_prof_test::visit_now();
  EXPECT_EQ(sums.stacks, 1u);
  EXPECT_EQ(sums.live_bytes, 301u);
  hs_free(v.kept);  // not a sample: nothing changes
  EXPECT_EQ(prof_stats().live_samples, 1u);
  hs_free(other);
  EXPECT_EQ(prof_stats().live_samples, 0u);
  EXPECT_EQ(prof_stats().unique_stacks, 0u);
}

bool stats_in_visitor(const hs_prof_sample_info_t*, void* arg) {
  hs_prof_stats_t s = hs_prof_test::blank_stats();
  *static_cast<int*>(arg) = hs_prof_stats_get(&s) ? 1 : 0;
  return false;
}

// Regression (fixed in efb6301): profile.h says "Calls made from inside a visitor callback
// (hs_prof_visit) fail fast (return false / NULL / do nothing)", but hs_prof_stats_get has no such
// check and succeeds inside a visitor (api.cc hs_prof_stats_get tests neither t_suppress nor
// t_lock_held). Harmless (the lock is held by this thread), but not what is documented.
TEST_F(ProfContract, StatsGetInsideVisitorFailsFastAsDocumented) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 6));
  void* p = hs_malloc(128);
  int result = -1;
  ASSERT_TRUE(hs_prof_visit(stats_in_visitor, &result));
  EXPECT_EQ(result, 0) << "hs_prof_stats_get succeeded inside a visitor";
  hs_free(p);
}

bool stop_after_one(const hs_prof_sample_info_t*, void* arg) {
  ++*static_cast<int*>(arg);
  return false;
}

TEST_F(ProfContract, VisitStopsEarlyAndSnapshotSurvivesStop) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 8));
  std::vector<void*> blocks;
  for (int i = 0; i < 40; ++i) blocks.push_back(alloc_distinct(i, i % 10, 200));
  int calls = 0;
  ASSERT_TRUE(hs_prof_visit(stop_after_one, &calls));
  EXPECT_EQ(calls, 1);
  hs_prof_snapshot_t* snapshot = hs_prof_snapshot_new();
  ASSERT_NE(snapshot, nullptr);
  hs_prof_test::VisitSums live = hs_prof_test::visit_now();
  hs_prof_test::VisitSums snap;
  ASSERT_TRUE(hs_prof_snapshot_visit(snapshot, hs_prof_test::VisitSums::add, &snap));
  snap.sort();
  EXPECT_EQ(live.live_objects, 40u);
  EXPECT_EQ(live.live_bytes, 40u * 200 + 60);  // sites add 0..3 bytes
  // The text header carries the same raw totals.
  hs_prof_test::HeaderCounts header = hs_prof_test::header_counts(hs_prof_test::dump_text());
  EXPECT_EQ(header.objects, 40u);
  EXPECT_EQ(header.bytes, 40u * 200 + 60);
  EXPECT_EQ(header.accum_objects, 0u) << "no accumulation in this session";
  EXPECT_EQ(snap.per_stack, live.per_stack);
  EXPECT_TRUE(snap.consistent);
  for (void* p : blocks) hs_free(p);
  hs_prof_stop();
  hs_prof_test::VisitSums after;
  ASSERT_TRUE(hs_prof_snapshot_visit(snapshot, hs_prof_test::VisitSums::add, &after));
  after.sort();
  EXPECT_EQ(after.per_stack, live.per_stack) << "a snapshot is a copy, valid after stop";
  hs_prof_snapshot_free(snapshot);
}

// ---- profiles ----------------------------------------------------------------------------------

TEST_F(ProfContract, EmptyProfileIsWellFormed) {
  ASSERT_TRUE(hs_prof_start_seeded(4096, 3));
  ASSERT_EQ(prof_stats().live_samples, 0u);
  std::string text = hs_prof_test::dump_text();
  ASSERT_FALSE(text.empty());
  std::string header = hs_prof_test::first_line(text);
  EXPECT_EQ(header.rfind("heap profile:", 0), 0u) << header;
  EXPECT_NE(header.find("@ heap_v2/4096"), std::string::npos) << header;
  EXPECT_NE(header.find(" 0: 0 ["), std::string::npos) << header;
  EXPECT_NE(text.find("\nMAPPED_LIBRARIES:\n"), std::string::npos);
  EXPECT_EQ(hs_prof_test::text_sample_lines(text), 0u) << text;
  std::string proto;
  ASSERT_TRUE(hs_prof_dump_proto_writer(hs_prof_test::append_writer, &proto));
  ASSERT_GE(proto.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(proto[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(proto[1]), 0x8b);
  EXPECT_EQ(hs_prof_test::visit_now().stacks, 0u);
  // Against a non-empty one: the same dump shows the sample lines.
  void* p = hs_malloc(1 << 20);  // at 4 KiB: sampled with probability 1 - e^-256
  text = hs_prof_test::dump_text();
  EXPECT_GE(hs_prof_test::text_sample_lines(text), 1u);
  hs_free(p);
}

TEST_F(ProfContract, DumpToPathAndBadPathFails) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 9));
  void* p = alloc_distinct(2, 2, 1000);
  hs_prof_test::TempDir dir;
  ASSERT_TRUE(hs_prof_dump(dir.file("a.heap").c_str()));
  ASSERT_TRUE(hs_prof_dump_proto(dir.file("a.pb.gz").c_str()));
  std::string text = hs_prof_test::read_file(dir.file("a.heap"));
  EXPECT_EQ(text.rfind("heap profile:", 0), 0u);
  EXPECT_EQ(hs_prof_test::text_sample_lines(text), 1u);
  std::string proto = hs_prof_test::read_file(dir.file("a.pb.gz"));
  ASSERT_GE(proto.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(proto[0]), 0x1f);
  EXPECT_FALSE(hs_prof_dump(dir.file("missing/dir/a.heap").c_str()));
  EXPECT_FALSE(hs_prof_dump(nullptr));
  EXPECT_FALSE(hs_prof_dump_format(dir.file("b").c_str(), 17));
  EXPECT_FALSE(hs_prof_test::file_exists(dir.file("b"))) << "nothing is created for a bad format";
  hs_free(p);
}

TEST_F(ProfContract, AccumModeKeepsCumulativeCountsUntilReset) {
  hs_prof_config_t c = HS_PROF_CONFIG_INIT;
  c.mode = HS_PROF_OVERRIDE;
  c.fields = HS_PROF_FIELD_SAMPLE_INTERVAL | HS_PROF_FIELD_ACCUM;
  c.sample_interval = 1;
  c.accum = 1;
  ASSERT_TRUE(hs_prof_start_ex(&c));
  std::vector<void*> blocks;
  for (int i = 0; i < 64; ++i) blocks.push_back(alloc_distinct(i, i % 4, 256));
  for (int i = 0; i < 32; ++i) hs_free(blocks[static_cast<size_t>(i)]);
  hs_prof_stats_t s = prof_stats();
  EXPECT_EQ(s.accum, 1);
  EXPECT_EQ(s.live_samples, 32u);
  EXPECT_EQ(s.accum_samples, 64u);
  EXPECT_GE(s.accum_bytes, 64u * 256);
  for (int i = 32; i < 64; ++i) hs_free(blocks[static_cast<size_t>(i)]);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.accum_samples, 64u);
  EXPECT_GT(s.unique_stacks, 0u) << "accum mode keeps the stacks of freed samples";
  hs_prof_test::VisitSums sums = hs_prof_test::visit_now();
  EXPECT_EQ(sums.accum_objects, 64u);
  EXPECT_EQ(sums.live_objects, 0u);
  hs_prof_test::HeaderCounts header = hs_prof_test::header_counts(hs_prof_test::dump_text());
  EXPECT_EQ(header.objects, 0u);
  EXPECT_EQ(header.accum_objects, 64u);
  EXPECT_EQ(header.accum_bytes, s.accum_bytes);
  hs_prof_reset();
  s = prof_stats();
  EXPECT_EQ(s.accum_samples, 0u);
  EXPECT_EQ(s.accum_bytes, 0u);
  EXPECT_EQ(s.unique_stacks, 0u);
  EXPECT_EQ(hs_prof_test::visit_now().stacks, 0u);
}

// ---- heaps and reallocation --------------------------------------------------------------------

TEST_F(ProfContract, HeapDestroyForgetsItsSamplesHeapDeleteKeepsThem) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 21));
  void* outside = hs_malloc(100);
  const hs_prof_stats_t base = prof_stats();
  ASSERT_EQ(base.live_samples, 1u);
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  for (int i = 0; i < 50; ++i)
    ASSERT_NE(hs_heap_malloc(heap, 256 + static_cast<size_t>(i)), nullptr);
  // A huge block too (its own mapping): an alignment above 64 KiB takes that path. (Not a
  // multi-MiB block: at interval 1 its cost was linear in its size, see below.)
  ASSERT_NE(hs_heap_malloc_aligned(heap, 200000, 256 * 1024), nullptr);
  hs_prof_stats_t s = prof_stats();
  EXPECT_EQ(s.live_samples, base.live_samples + 51);
  hs_heap_destroy(heap);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, base.live_samples);
  EXPECT_EQ(s.live_bytes, base.live_bytes);
  EXPECT_EQ(hs_prof_test::visit_now().live_objects, base.live_samples);
  // The destroyed heap's memory is reused: new blocks there are new samples only.
  std::vector<void*> again;
  for (int i = 0; i < 50; ++i) again.push_back(hs_malloc(256 + static_cast<size_t>(i)));
  EXPECT_EQ(prof_stats().live_samples, base.live_samples + 50);
  for (void* p : again) hs_free(p);
  EXPECT_EQ(prof_stats().live_samples, base.live_samples);

  hs_heap_t* kept = hs_heap_new();
  std::vector<void*> blocks;
  for (int i = 0; i < 30; ++i) blocks.push_back(hs_heap_malloc(kept, 512));
  hs_heap_delete(kept);  // blocks move to the default heap and stay samples
  s = prof_stats();
  EXPECT_EQ(s.live_samples, base.live_samples + 30);
  EXPECT_EQ(s.live_bytes, base.live_bytes + 30 * 512);
  for (void* p : blocks) hs_free(p);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, base.live_samples);
  EXPECT_EQ(s.live_bytes, base.live_bytes);
  hs_free(outside);
  EXPECT_EQ(prof_stats().live_samples, 0u);
}

TEST_F(ProfContract, ReallocInPlaceUpdatesBytesAndMovingReallocStaysConsistent) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 31));
  void* p = hs_malloc(1000);
  ASSERT_NE(p, nullptr);
  hs_prof_stats_t s = prof_stats();
  ASSERT_EQ(s.live_samples, 1u);
  ASSERT_EQ(s.live_bytes, 1000u);
  const double estimate_1000 = s.live_bytes_estimate;
  void* q = hs_realloc(p, 900);  // shrink within the block: in place
  ASSERT_EQ(q, p) << "a shrink within the block is expected in place";
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 1u);
  EXPECT_EQ(s.live_bytes, 900u);
  EXPECT_LT(s.live_bytes_estimate, estimate_1000);
  EXPECT_EQ(hs_prof_test::visit_now().live_bytes, 900u);
  // Grow back within the usable size, through hs_expand.
  ASSERT_GE(hs_usable_size(q), 1000u);
  ASSERT_EQ(hs_expand(q, 1000), q);
  s = prof_stats();
  EXPECT_EQ(s.live_bytes, 1000u);
  EXPECT_NEAR(s.live_bytes_estimate, estimate_1000, 1e-6 * estimate_1000);
  // Moving: the old sample is forgotten, the new block is a fresh sample.
  void* moved = hs_realloc(q, 300000);
  ASSERT_NE(moved, nullptr);
  ASSERT_NE(moved, q);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 1u);
  EXPECT_EQ(s.live_bytes, 300000u);
  void* back = hs_realloc(moved, 40);  // moving down to a small class
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 1u);
  EXPECT_EQ(s.live_bytes, 40u);
  hs_free(back);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.live_bytes_estimate, 0.0);
  EXPECT_EQ(s.unique_stacks, 0u);
}

// Growth without copying (a large block over the free slices after it, a huge block by
// remapping) counts as a moving realloc: one live sample, of the new size, whatever path ran;
// an hs_expand that cannot grow leaves the old sample alone. At a 4 KiB interval every block
// here is sampled (P = 1 - exp(-size/4096)).
TEST_F(ProfContract, GrowthWithoutCopyingKeepsOneSampleOfTheNewSize) {
  ASSERT_TRUE(hs_prof_start_seeded(4096, 73));
  auto live = [] {
    const hs_prof_stats_t s = prof_stats();
    return std::make_pair(s.live_samples, s.live_bytes);
  };
  void* p = hs_malloc(100000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(live(), std::make_pair(uint64_t{1}, uint64_t{100000}));
  p = hs_realloc(p, 3000000);  // large: in place over free slices, or moved
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(live(), std::make_pair(uint64_t{1}, uint64_t{3000000}));
  // A growing medium block: moved onto a slice of its own, then grown in place there.
  void* grown = hs_malloc(20000);
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(live(), std::make_pair(uint64_t{2}, uint64_t{3020000}));
  for (size_t next : {40000u, 60000u, 65536u}) {
    grown = hs_realloc(grown, next);
    ASSERT_NE(grown, nullptr);
    EXPECT_EQ(live(), std::make_pair(uint64_t{2}, uint64_t{3000000} + next)) << next;
  }
  hs_free(grown);
  EXPECT_EQ(live(), std::make_pair(uint64_t{1}, uint64_t{3000000}));
  p = hs_realloc(p, 40u << 20);  // large to huge: moved
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(live(), std::make_pair(uint64_t{1}, uint64_t{40} << 20));
  p = hs_realloc(p, 90u << 20);  // huge to huge: remapped (in place or moved)
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(live(), std::make_pair(uint64_t{1}, uint64_t{90} << 20));
  void* neighbour = hs_malloc(30u << 20);  // often right after p: expanding may fail
  ASSERT_NE(neighbour, nullptr);
  const auto before_expand = live();
  if (hs_expand(p, 150u << 20) == p) {
    EXPECT_EQ(live(), std::make_pair(before_expand.first, before_expand.second + (60u << 20)));
  } else {
    EXPECT_EQ(live(), before_expand) << "a failed hs_expand must keep the block's sample";
  }
  hs_free(neighbour);
  hs_free(p);
  EXPECT_EQ(live(), std::make_pair(uint64_t{0}, uint64_t{0}));
}

// Zeroing and array allocations, small and huge, are samples with their requested bytes.
TEST_F(ProfContract, CallocAndZallocSamplesCountRequestedBytes) {
  ASSERT_TRUE(hs_prof_start_seeded(4096, 71));
  void* huge = hs_calloc(1000, 3000);  // 3 MB: a dedicated zeroed mapping
  ASSERT_NE(huge, nullptr);
  hs_prof_stats_t s = prof_stats();
  EXPECT_EQ(s.live_samples, 1u);
  EXPECT_EQ(s.live_bytes, 3000000u);
  void* zeroed = hs_zalloc(5u << 20);
  ASSERT_NE(zeroed, nullptr);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 2u);
  EXPECT_EQ(s.live_bytes, 3000000u + (5u << 20));
  hs_free(huge);
  hs_free(zeroed);
  hs_prof_stop();
  ASSERT_TRUE(hs_prof_start_seeded(1, 72));
  void* small = hs_calloc(10, 30);
  void* small_zero = hs_zalloc(123);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 2u);
  EXPECT_EQ(s.live_bytes, 300u + 123u);
  hs_free(small);
  hs_free(small_zero);
  EXPECT_EQ(prof_stats().live_samples, 0u);
}

std::vector<void*> aligned_blocks(uint64_t* requested) {
  std::vector<void*> blocks;
  *requested = 0;
  for (int i = 0; i < 64; ++i) {
    size_t size = 100 + 13 * static_cast<size_t>(i);
    size_t alignment = size_t{8} << (i % 10);  // 8 .. 4096
    void* p = hs_malloc_aligned(size, alignment);
    EXPECT_NE(p, nullptr);
    EXPECT_TRUE(hs_test::is_aligned(p, alignment));
    blocks.push_back(p);
    *requested += size;
  }
  return blocks;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Regression (fixed in efb6301): when an allocation crossed the countdown,
// sample_countdown_expired drew distances in a loop until the countdown was positive again -
// one exp draw (log1p) per `interval` bytes of the allocation, O(size / interval). At interval
// 1 a 4 MiB block cost ~4M draws (0.15-0.2 s of CPU); a 1 GiB block, about a minute. The
// exponential is memoryless, so the distance past the end of the block is one fresh draw.
TEST_F(ProfContract, LargeAllocationCostDoesNotGrowWithSizeOverInterval) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 61));
  double before = thread_cpu_seconds();
  void* p = hs_malloc(4u << 20);
  double seconds = thread_cpu_seconds() - before;
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(prof_stats().live_samples, 1u);
  EXPECT_LT(seconds, 0.02) << "one 4 MiB allocation at interval 1 took " << seconds << " s of CPU";
  hs_free(p);
}

TEST_F(ProfContract, AlignedAndCrossThreadFreesReturnToBaseline) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 41));
  uint64_t requested = 0;
  std::vector<void*> blocks = aligned_blocks(&requested);
  hs_prof_stats_t s = prof_stats();
  EXPECT_EQ(s.live_samples, 64u);
  EXPECT_GE(s.live_bytes, requested);
  std::thread other([&] {
    for (void* p : blocks) hs_free(p);
  });
  other.join();
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.unique_stacks, 0u);
}

// Regression (fixed in efb6301): profile.h defines live_bytes as "their requested bytes", and the
// allocator's own statistics count what the caller asked for; but an aligned allocation (16 <
// alignment <= the natural-alignment limit) is sampled and recorded with its size rounded up to the
// alignment (heap_malloc_aligned calls heap_malloc(rounded)): hs_malloc_aligned(100, 4096)
// shows as 4096 bytes in profiles.
TEST_F(ProfContract, AlignedSamplesRecordRequestedBytes) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 42));
  void* one = hs_malloc_aligned(100, 4096);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(prof_stats().live_bytes, 100u);
  hs_free(one);
  uint64_t requested = 0;
  std::vector<void*> blocks = aligned_blocks(&requested);
  EXPECT_EQ(prof_stats().live_bytes, requested);
  EXPECT_EQ(hs_prof_test::visit_now().live_bytes, requested);
  for (void* p : blocks) hs_free(p);
}

// ---- pluggable profilers -----------------------------------------------------------------------

constexpr uint64_t kMagic = 0x5EEDF00DCAFEULL;

struct PlugCounters {
  std::atomic<int> alloc{0}, free{0}, realloc{0}, snapshot{0}, bad_data{0}, wrong_heap{0};
  std::atomic<size_t> last_old{0}, last_new{0};
  hs_heap_t* expected_heap = nullptr;
  void reset() {
    alloc = free = realloc = snapshot = bad_data = wrong_heap = 0;
    last_old = last_new = 0;
    expected_heap = nullptr;
  }
};
PlugCounters g_plug;

size_t plug_on_alloc(hs_profiler_t*, hs_profiler_sample_data_t* data, void* ptr, size_t size,
                     size_t, uint64_t, hs_heap_t* heap) {
  g_plug.alloc++;
  if (g_plug.expected_heap != nullptr && heap != g_plug.expected_heap) g_plug.wrong_heap++;
  if (data == nullptr || data->user_data_size != 16) {
    g_plug.bad_data++;
    return 0;
  }
  uint64_t value[2] = {reinterpret_cast<uintptr_t>(ptr) ^ kMagic, size};
  std::memcpy(data->user_data, value, sizeof value);
  return 0;
}

void plug_on_free(hs_profiler_t*, hs_profiler_sample_data_t* data, void* ptr, hs_heap_t*) {
  g_plug.free++;
  uint64_t value[2] = {0, 0};
  if (data == nullptr || data->user_data_size != 16) {
    g_plug.bad_data++;
    return;
  }
  std::memcpy(value, data->user_data, sizeof value);
  if (value[0] != (reinterpret_cast<uintptr_t>(ptr) ^ kMagic)) g_plug.bad_data++;
}

size_t plug_on_realloc(hs_profiler_t*, hs_profiler_sample_data_t* data, void* ptr, size_t old_size,
                       size_t new_size, hs_heap_t*) {
  g_plug.realloc++;
  g_plug.last_old = old_size;
  g_plug.last_new = new_size;
  uint64_t value[2] = {0, 0};
  if (data == nullptr) {
    g_plug.bad_data++;
    return 0;
  }
  std::memcpy(value, data->user_data, sizeof value);
  if (value[0] != (reinterpret_cast<uintptr_t>(ptr) ^ kMagic)) g_plug.bad_data++;
  return 0;
}

void plug_on_snapshot(hs_profiler_t*) { g_plug.snapshot++; }

hs_profiler_t make_profiler() {
  hs_profiler_t p{};
  p.reserved = nullptr;
  p.sample_data_size = 16;
  p.initial_sample_interval = 1;  // every allocation
  p.on_alloc = plug_on_alloc;
  p.on_free = plug_on_free;
  p.on_realloc_inplace = plug_on_realloc;
  p.on_snapshot = plug_on_snapshot;
  return p;
}

// Profiler objects must outlive every heap that may point at them: static storage.
hs_profiler_t g_heap_profiler = make_profiler();
hs_profiler_t g_process_profiler = make_profiler();

TEST_F(ProfContract, PluggableProfilerOnAHeapSeesEveryAllocationAndFreeWithItsUserData) {
  g_plug.reset();
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  g_plug.expected_heap = heap;
  ASSERT_TRUE(hs_heap_profile(heap, &g_heap_profiler));
  ASSERT_TRUE(hs_profiler_start(&g_heap_profiler));
  EXPECT_FALSE(hs_prof_is_enabled()) << "a user profiler is not the built-in session";
  constexpr int kCount = 200;
  std::vector<void*> blocks;
  for (int i = 0; i < kCount; ++i) {
    void* p = hs_heap_malloc(heap, 64 + static_cast<size_t>(i));
    ASSERT_NE(p, nullptr);
    blocks.push_back(p);
  }
  EXPECT_EQ(g_plug.alloc.load(), kCount);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  EXPECT_EQ(g_plug.wrong_heap.load(), 0);
  // The default heap is not attached.
  for (int i = 0; i < 50; ++i) hs_free(hs_malloc(128));
  EXPECT_EQ(g_plug.alloc.load(), kCount);
  EXPECT_EQ(g_plug.free.load(), 0);
  EXPECT_EQ(prof_stats().live_samples, 0u) << "user samples are not built-in samples";
  // In place: on_realloc_inplace with the old and new sizes (the block of 64+199 shrinks).
  void* q = hs_heap_realloc(heap, blocks.back(), 200);
  ASSERT_EQ(q, blocks.back());
  EXPECT_EQ(g_plug.realloc.load(), 1);
  EXPECT_EQ(g_plug.last_old.load(), 64u + kCount - 1);
  EXPECT_EQ(g_plug.last_new.load(), 200u);
  EXPECT_EQ(g_plug.alloc.load(), kCount);
  // Half freed: one on_free each (also from another thread).
  for (int i = 0; i < kCount / 4; ++i) hs_free(blocks[static_cast<size_t>(i)]);
  std::thread remote([&] {
    for (int i = kCount / 4; i < kCount / 2; ++i) hs_free(blocks[static_cast<size_t>(i)]);
  });
  remote.join();
  EXPECT_EQ(g_plug.free.load(), kCount / 2);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  hs_profiler_snapshot(&g_heap_profiler);
  EXPECT_EQ(g_plug.snapshot.load(), 1);
  // Stop: on_free for every remaining sample, then never again for those blocks.
  ASSERT_TRUE(hs_profiler_stop(&g_heap_profiler));
  EXPECT_EQ(g_plug.free.load(), kCount);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  EXPECT_FALSE(hs_profiler_stop(&g_heap_profiler)) << "already stopped";
  for (int i = kCount / 2; i < kCount; ++i) hs_free(blocks[static_cast<size_t>(i)]);
  EXPECT_EQ(g_plug.free.load(), kCount);
  for (int i = 0; i < 20; ++i) hs_free(hs_heap_malloc(heap, 100));
  EXPECT_EQ(g_plug.alloc.load(), kCount) << "no samples after stop";

  // Restarted: hs_heap_destroy reports the heap's samples through on_free.
  ASSERT_TRUE(hs_profiler_start(&g_heap_profiler));
  EXPECT_FALSE(hs_profiler_start(&g_heap_profiler)) << "already started";
  // More than one pass of the destroy scan (it hands user samples back 64 at a time).
  constexpr int kDestroyed = 150;
  for (int i = 0; i < kDestroyed; ++i) ASSERT_NE(hs_heap_malloc(heap, 300), nullptr);
  EXPECT_EQ(g_plug.alloc.load(), kCount + kDestroyed);
  hs_heap_destroy(heap);
  EXPECT_EQ(g_plug.free.load(), kCount + kDestroyed);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  ASSERT_TRUE(hs_profiler_stop(&g_heap_profiler));
  EXPECT_EQ(g_plug.free.load(), kCount + kDestroyed);
}

TEST_F(ProfContract, ProcessWideProfilerAndProfileDisabledHeap) {
  g_plug.reset();
  ASSERT_TRUE(hs_profile(&g_process_profiler));
  ASSERT_TRUE(hs_profiler_start(&g_process_profiler));
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) blocks.push_back(hs_malloc(200));
  EXPECT_EQ(g_plug.alloc.load(), 100);
  hs_heap_t* quiet = hs_heap_new();
  hs_heap_profile_disable(quiet);
  for (int i = 0; i < 50; ++i) ASSERT_NE(hs_heap_malloc(quiet, 200), nullptr);
  EXPECT_EQ(g_plug.alloc.load(), 100) << "a profile-disabled heap is never sampled";
  hs_heap_t* loud = hs_heap_new();
  for (int i = 0; i < 10; ++i) ASSERT_NE(hs_heap_malloc(loud, 200), nullptr);
  EXPECT_EQ(g_plug.alloc.load(), 110) << "other heaps get the process-wide profiler";
  hs_heap_destroy(loud);
  EXPECT_EQ(g_plug.free.load(), 10);
  hs_heap_destroy(quiet);
  EXPECT_EQ(g_plug.free.load(), 10);
  for (void* p : blocks) hs_free(p);
  EXPECT_EQ(g_plug.free.load(), 110);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  ASSERT_TRUE(hs_profiler_stop(&g_process_profiler));
  ASSERT_TRUE(hs_profile(nullptr));
  for (int i = 0; i < 10; ++i) hs_free(hs_malloc(200));
  EXPECT_EQ(g_plug.alloc.load(), 110);
}

// on_alloc's return value is the next mean interval; a heap's own profiler wins over the
// process-wide one; the built-in session samples the other heaps at the same time; a profiler
// without on_free gets no user data and tracks nothing.
std::atomic<int> g_slow_allocs{0};
size_t slow_down_on_alloc(hs_profiler_t*, hs_profiler_sample_data_t*, void*, size_t, size_t,
                          uint64_t, hs_heap_t*) {
  g_slow_allocs++;
  return size_t{1} << 40;  // from now on, (almost) never
}
std::atomic<int> g_untracked_allocs{0}, g_untracked_with_data{0};
size_t untracked_on_alloc(hs_profiler_t*, hs_profiler_sample_data_t* data, void*, size_t, size_t,
                          uint64_t, hs_heap_t*) {
  g_untracked_allocs++;
  if (data != nullptr) g_untracked_with_data++;
  return 0;
}
hs_profiler_t g_slow_profiler = [] {
  hs_profiler_t p = make_profiler();
  p.on_alloc = slow_down_on_alloc;
  p.on_free = nullptr;
  return p;
}();
hs_profiler_t g_untracked_profiler = [] {
  hs_profiler_t p = make_profiler();
  p.on_alloc = untracked_on_alloc;
  p.on_free = nullptr;
  return p;
}();

TEST_F(ProfContract, PluggableIntervalFromOnAllocPrecedenceAndBuiltInSideBySide) {
  g_plug.reset();
  hs_heap_t* slow = hs_heap_new();
  ASSERT_TRUE(hs_heap_profile(slow, &g_slow_profiler));
  ASSERT_TRUE(hs_profiler_start(&g_slow_profiler));
  for (int i = 0; i < 1000; ++i) hs_free(hs_heap_malloc(slow, 256));
  EXPECT_EQ(g_slow_allocs.load(), 1) << "the interval returned by on_alloc takes effect";
  ASSERT_TRUE(hs_profiler_stop(&g_slow_profiler));

  // Built-in session at interval 1 plus a heap-attached user profiler and a process-wide one.
  ASSERT_TRUE(hs_prof_start_seeded(1, 51));
  hs_heap_t* own = hs_heap_new();
  ASSERT_TRUE(hs_heap_profile(own, &g_heap_profiler));
  ASSERT_TRUE(hs_profiler_start(&g_heap_profiler));
  std::vector<void*> blocks;
  for (int i = 0; i < 20; ++i) blocks.push_back(hs_heap_malloc(own, 128));
  for (int i = 0; i < 30; ++i) blocks.push_back(hs_malloc(128));
  EXPECT_EQ(g_plug.alloc.load(), 20);
  EXPECT_EQ(prof_stats().live_samples, 30u) << "the default heap still feeds the built-in one";
  ASSERT_TRUE(hs_profile(&g_untracked_profiler));
  ASSERT_TRUE(hs_profiler_start(&g_untracked_profiler));
  for (int i = 0; i < 10; ++i) blocks.push_back(hs_heap_malloc(own, 128));
  for (int i = 0; i < 15; ++i) blocks.push_back(hs_malloc(128));
  EXPECT_EQ(g_plug.alloc.load(), 30) << "the heap's own profiler wins over the process-wide one";
  EXPECT_EQ(g_untracked_allocs.load(), 15);
  EXPECT_EQ(g_untracked_with_data.load(), 0) << "no user data without on_free";
  EXPECT_EQ(prof_stats().live_samples, 30u);
  for (void* p : blocks) hs_free(p);
  EXPECT_EQ(g_plug.free.load(), 30);
  EXPECT_EQ(g_plug.bad_data.load(), 0);
  EXPECT_EQ(prof_stats().live_samples, 0u);
  ASSERT_TRUE(hs_profiler_stop(&g_untracked_profiler));
  ASSERT_TRUE(hs_profile(nullptr));
  ASSERT_TRUE(hs_profiler_stop(&g_heap_profiler));
  ASSERT_TRUE(hs_heap_profile(own, nullptr));
  hs_heap_delete(own);
  hs_heap_delete(slow);
}

TEST_F(ProfContract, PprofProfilerInuseGrowthTriggerAndBusySession) {
  hs_prof_test::TempDir dir;
  const std::string base = dir.file("inuse");
  hs_profiler_t* pprof = hs_pprof_profiler_new(4096, base.c_str(), 0, 1 << 20, 0);
  ASSERT_NE(pprof, nullptr);
  ASSERT_TRUE(hs_prof_start(4096));
  EXPECT_FALSE(hs_profiler_start(pprof)) << "the built-in session is already running";
  hs_prof_stop();
  ASSERT_TRUE(hs_profiler_start(pprof));
  std::vector<void*> blocks;
  for (int i = 0; i < 64; ++i) {  // 64 x 4 KiB = 256 KiB: below the in-use trigger
    blocks.push_back(hs_malloc(4096));
    hs_free(blocks.back());
    blocks.pop_back();
  }
  EXPECT_FALSE(hs_prof_test::file_exists(base + ".0001.pb.gz"));
  for (int i = 0; i < 512; ++i) blocks.push_back(hs_malloc(4096));  // 2 MiB live
  EXPECT_TRUE(hs_prof_test::file_exists(base + ".0001.pb.gz"));
  for (void* p : blocks) hs_free(p);
  ASSERT_TRUE(hs_profiler_stop(pprof));
  hs_pprof_profiler_delete(pprof);
  EXPECT_EQ(hs_pprof_profiler_new(4096, nullptr, 0, 0, 0), nullptr);
  EXPECT_EQ(hs_pprof_profiler_new(4096, ".heap", 0, 0, 0), nullptr) << "empty base name";
}

// Regression (crash, fixed in efb6301): a user profiler's sample data and records live in the same
// profiler memory as the built-in session's. hs_prof_stop hands all of it back to the OS (api.cc:
// g_memory.release_everything()) when no record and no stack is left, but user_sample
// (pluggable.cc) allocates the sample data under the lock, drops the lock to call on_alloc,
// and only then inserts the record: a built-in session stopped on another thread in that
// window unmaps the data on_alloc is writing (SIGSEGV), or leaves the record pointing at it.
// Run in a forked child so the crash fails this test only.
std::atomic<int> g_race_allocs{0}, g_race_bad{0};
size_t racing_on_alloc(hs_profiler_t*, hs_profiler_sample_data_t* data, void* ptr, size_t, size_t,
                       uint64_t, hs_heap_t*) {
  g_race_allocs++;
  if (data == nullptr || data->user_data_size != 16) {
    g_race_bad++;
    return 0;
  }
  for (int i = 0; i < 200; ++i) asm volatile("" ::: "memory");  // widen the window
  uint64_t value[2] = {reinterpret_cast<uintptr_t>(ptr) ^ kMagic, 0};
  std::memcpy(data->user_data, value, sizeof value);
  return 0;
}
void racing_on_free(hs_profiler_t*, hs_profiler_sample_data_t* data, void* ptr, hs_heap_t*) {
  uint64_t value[2] = {0, 0};
  if (data == nullptr) {
    g_race_bad++;
    return;
  }
  std::memcpy(value, data->user_data, sizeof value);
  if (value[0] != (reinterpret_cast<uintptr_t>(ptr) ^ kMagic)) g_race_bad++;
}
hs_profiler_t g_racing_profiler = [] {
  hs_profiler_t p = make_profiler();
  p.on_alloc = racing_on_alloc;
  p.on_free = racing_on_free;
  return p;
}();

// The race itself; returns 0 when every sample kept its data.
int race_user_samples_with_builtin_stops() {
  std::atomic<bool> ready{false}, done{false};
  std::thread sampler([&] {
    hs_heap_t* heap = hs_heap_new();
    if (!hs_heap_profile(heap, &g_racing_profiler) || !hs_profiler_start(&g_racing_profiler)) {
      g_race_bad++;
    }
    ready = true;
    const int rounds = hs_test::kSanitized ? 20000 : 200000;
    for (int i = 0; i < rounds; ++i) hs_free(hs_heap_malloc(heap, 64));
    done = true;
    (void)hs_profiler_stop(&g_racing_profiler);
    (void)hs_heap_profile(heap, nullptr);
    hs_heap_delete(heap);
  });
  while (!ready.load()) std::this_thread::yield();
  int sessions = 0;
  while (!done.load()) {
    if (!hs_prof_start_seeded(1 << 20, 1)) return 3;
    hs_prof_stop();
    ++sessions;
  }
  sampler.join();
  if (g_race_allocs.load() == 0 || sessions == 0) return 4;
  return g_race_bad.load() == 0 ? 0 : 5;
}

TEST_F(ProfContract, BuiltInStopKeepsInFlightUserSampleData) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(60);
    _exit(race_user_samples_with_builtin_stops());
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_FALSE(WIFSIGNALED(status)) << "the racing child died of signal " << WTERMSIG(status)
                                    << (WTERMSIG(status) == SIGSEGV ? " (SIGSEGV)" : "");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: start failed, 4: nothing ran, 5: user data lost";
}

TEST_F(ProfContract, PprofProfilerWritesNumberedSnapshotsByAllocatedBytes) {
  hs_prof_test::TempDir dir;
  const std::string base = dir.file("snap");
  hs_profiler_t* pprof = hs_pprof_profiler_new(4096, base.c_str(), 1 << 20, 0, 0);
  ASSERT_NE(pprof, nullptr);
  ASSERT_TRUE(hs_profiler_start(pprof));
  EXPECT_TRUE(hs_prof_is_enabled());
  EXPECT_EQ(prof_stats().sample_interval, 4096u);
  std::vector<void*> blocks;
  for (int i = 0; i < 768; ++i) blocks.push_back(hs_malloc(4096));  // 3 MiB
  const std::string first = base + ".0001.pb.gz";
  ASSERT_TRUE(hs_prof_test::file_exists(first));
  std::string data = hs_prof_test::read_file(first);
  ASSERT_GE(data.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(data[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(data[1]), 0x8b);
  EXPECT_TRUE(hs_prof_test::file_exists(base + ".0002.pb.gz")) << "3 MiB: more than one snapshot";
  for (void* p : blocks) hs_free(p);
  ASSERT_TRUE(hs_profiler_stop(pprof));
  EXPECT_FALSE(hs_prof_is_enabled());
  hs_pprof_profiler_delete(pprof);
}

TEST_F(ProfContract, PprofProfilerHeapBaseNameWritesTextSnapshots) {
  hs_prof_test::TempDir dir;
  const std::string base = dir.file("snap");
  hs_profiler_t* pprof = hs_pprof_profiler_new(4096, (base + ".heap").c_str(), 0, 0, 0);
  ASSERT_NE(pprof, nullptr);
  ASSERT_TRUE(hs_profiler_start(pprof));
  std::vector<void*> blocks;
  for (int i = 0; i < 256; ++i) blocks.push_back(hs_malloc(4096));
  EXPECT_FALSE(hs_prof_test::file_exists(base + ".0001.heap")) << "no automatic trigger set";
  hs_profiler_snapshot(pprof);
  ASSERT_TRUE(hs_prof_test::file_exists(base + ".0001.heap"));
  std::string text = hs_prof_test::read_file(base + ".0001.heap");
  EXPECT_EQ(text.rfind("heap profile:", 0), 0u);
  EXPECT_NE(hs_prof_test::first_line(text).find("@ heap_v2/4096"), std::string::npos);
  EXPECT_GE(hs_prof_test::text_sample_lines(text), 1u);
  hs_profiler_snapshot(pprof);
  EXPECT_TRUE(hs_prof_test::file_exists(base + ".0002.heap"));
  for (void* p : blocks) hs_free(p);
  ASSERT_TRUE(hs_profiler_stop(pprof));
  hs_pprof_profiler_delete(pprof);
}

}  // namespace
