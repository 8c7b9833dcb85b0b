// The profiler's API contract, hs_prof_config_t: null and zeroed configs, invalid ones without side
// effects, and FALLBACK/OVERRIDE resolved field by field against the HEAPSCOPE_PROF_* environment.
#include "contract_support.h"

namespace {

using namespace hs_prof_contract;

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

}  // namespace
