// End to end: the real sampler, the real stack walk, the real dump, read by `go tool pprof`.
// A known chain (test -> level_one -> level_two) allocates kCount blocks of kSize bytes
// through hs_malloc with the profiler sampling every kInterval bytes on average; each format
// must name the chain's functions and estimate the live bytes within 15% of the truth.
// This binary is a PIE built with -g -fno-omit-frame-pointer (engine/tests/CMakeLists.txt).
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "alloc_chain.h"
#include "profile_fixture.h"
#include "reader_support.h"

namespace {

constexpr size_t kInterval = 4096;
constexpr size_t kCount = 8192;
constexpr size_t kSize = 1024;
constexpr double kTrueBytes = static_cast<double>(kCount * kSize);  // 8 MiB
constexpr uint64_t kSeed = 20261130;

// 'a' 'b' for the shell (built with append: GCC 12 misreports operator+ chains as -Wrestrict).
std::string shell_args(const std::string& a, const std::string& b = "") {
  std::string out;
  out.append("'").append(a).append("'");
  if (!b.empty()) out.append(" '").append(b).append("'");
  return out;
}

// The flat% of the `-top` line naming `function` (-1 if absent).
double flat_percent(const std::string& top, const std::string& function) {
  std::istringstream in(top);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string flat, flat_pct, sum_pct, cum, cum_pct, name;
    if (!(fields >> flat >> flat_pct >> sum_pct >> cum >> cum_pct >> name)) continue;
    if (name == function && flat_pct.back() == '%') return std::atof(flat_pct.c_str());
  }
  return -1;
}

class EndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(hs_prof_start_seeded(kInterval, kSeed));
    blocks_.assign(kCount, nullptr);
    level_one(blocks_.data(), kCount, kSize);
    for (void* p : blocks_) ASSERT_NE(p, nullptr);
    text_ = scratch_->file("heap.txt");
    proto_ = scratch_->file("heap.pb.gz");
    symbolized_ = scratch_->file("heap.sym.pb.gz");
    ASSERT_TRUE(hs_prof_dump(text_.c_str()));
    ASSERT_TRUE(hs_prof_dump_format(proto_.c_str(), HS_PROF_FORMAT_PROTO));
    ASSERT_TRUE(hs_prof_dump_format(symbolized_.c_str(), HS_PROF_FORMAT_PROTO_SYMBOLIZED));
    for (void* p : blocks_) hs_free(p);
    hs_prof_stop();
  }

  void SetUp() override {
    if (!hs_test::tool_available("go")) GTEST_SKIP() << "go is not installed";
  }

  // `-top` names the chain, level_two holds (nearly) all of the heap, and `-raw`'s in-use
  // bytes column (`column`) is within 15% of the truth.
  static void expect_chain(const std::string& args, size_t column) {
    hs_test::CommandResult top = scratch_->go_pprof("-top " + args);
    ASSERT_EQ(top.status, 0) << top.output;
    EXPECT_GE(flat_percent(top.output, "level_two"), 90.0) << top.output;
    EXPECT_NE(top.output.find("level_one"), std::string::npos) << top.output;

    hs_test::CommandResult raw = scratch_->go_pprof("-raw " + args);
    ASSERT_EQ(raw.status, 0) << raw.output;
    std::vector<int64_t> totals = hs_test::raw_totals(raw.output);
    ASSERT_GT(totals.size(), column) << raw.output;
    EXPECT_NEAR(static_cast<double>(totals[column]), kTrueBytes, 0.15 * kTrueBytes) << raw.output;
  }

  static inline hs_test::ScratchDir* scratch_ = new hs_test::ScratchDir;  // lives to exit
  static inline std::vector<void*> blocks_;
  static inline std::string text_, proto_, symbolized_;
};

TEST_F(EndToEnd, TextWithBinary) {
  std::ifstream in(text_);
  std::string header;
  ASSERT_TRUE(std::getline(in, header));
  EXPECT_EQ(header.rfind("heap profile: ", 0), 0u) << header;
  EXPECT_NE(header.find("] @ heap_v2/4096"), std::string::npos) << header;
  // No accumulation: the text profile has objects/space only; space is column 1.
  expect_chain(shell_args(hs_test::self_exe_path(), text_), 1);
}

TEST_F(EndToEnd, ProtoWithBinary) {
  expect_chain(shell_args(hs_test::self_exe_path(), proto_), 3);  // inuse_space
}

TEST_F(EndToEnd, SymbolizedProtoWithoutBinary) {
  expect_chain(shell_args(symbolized_), 3);
  // The caller of level_one is a C++ member function: named, and demangled, by the writer.
  hs_test::CommandResult top = scratch_->go_pprof("-top " + shell_args(symbolized_));
  EXPECT_NE(top.output.find("EndToEnd::SetUpTestSuite()"), std::string::npos) << top.output;
}

// The stack walk itself, without a reader: every sample of the chain's blocks holds, innermost
// first, a return address inside level_two, then one inside level_one, then more (this test's
// and its callers'). A walk that misreads the CPU's frame records (the AArch64 {x29, x30} pairs,
// x86-64's {rbp, return address}) fails here on either architecture, go installed or not.
bool within(const void* pc, const void* function, size_t bytes = 512) {
  auto at = reinterpret_cast<uintptr_t>(pc);
  auto start = reinterpret_cast<uintptr_t>(function);
  return at > start && at - start < bytes;
}

struct ChainFrames {
  uint64_t stacks = 0;
  uint64_t chain_stacks = 0;
};

TEST(StackWalk, SamplesHoldTheChainsReturnAddressesInnermostFirst) {
  ASSERT_TRUE(hs_prof_start_seeded(1, kSeed));  // every allocation sampled
  std::vector<void*> blocks(64);
  level_one(blocks.data(), blocks.size(), 256);
  ChainFrames frames;
  ASSERT_TRUE(hs_prof_visit(
      [](const hs_prof_sample_info_t* info, void* arg) {
        auto* f = static_cast<ChainFrames*>(arg);
        ++f->stacks;
        if (info->depth >= 3 && within(info->stack[0], reinterpret_cast<const void*>(&level_two)) &&
            within(info->stack[1], reinterpret_cast<const void*>(&level_one))) {
          ++f->chain_stacks;
        }
        return true;
      },
      &frames));
  for (void* p : blocks) hs_free(p);
  hs_prof_stop();
  EXPECT_GE(frames.chain_stacks, 1u) << frames.stacks << " stacks, none starting with "
                                     << "level_two <- level_one";
}

}  // namespace
