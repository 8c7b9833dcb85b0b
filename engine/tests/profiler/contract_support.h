// Shared by the profiler's API contract tests (contract_*_test.cc, one file per part of the
// contract): call sites at chosen stack depths, a clean HEAPSCOPE_PROF_* environment, and the
// ProfContract fixture, which leaves no session running before or after a test.
// The tests link with heapscope_api and allocate through hs_*; they are built with
// -fno-omit-frame-pointer so recursion depth gives distinct stacks.
#pragma once

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

namespace hs_prof_contract {

using hs_prof_test::prof_stats;
using hs_prof_test::ScopedEnv;

// Allocates `size` bytes `depth` frames below the caller: each depth is a distinct stack.
__attribute__((noinline, noclone)) inline void* alloc_at_depth(int depth, size_t size) {
  if (depth <= 0) return hs_test::opaque(hs_malloc(size));
  void* p = alloc_at_depth(depth - 1, size);
  asm volatile("" : "+r"(p)::"memory");  // not a tail call: this frame stays on the stack
  return p;
}

// Four call sites (distinct return addresses) times recursion depth.
__attribute__((noinline, noclone)) inline void* alloc_distinct(int site, int depth, size_t size) {
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
inline void expect_one_live_sample_then_none(void* sample, uint64_t bytes) {
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

// A config giving every numeric field (interval 2048, 1 MiB budget, seed 999, accum, depth 21).
inline hs_prof_config_t full_struct(uint32_t mode) {
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

}  // namespace hs_prof_contract
