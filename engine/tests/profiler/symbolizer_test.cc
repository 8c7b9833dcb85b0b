// The ELF symbolizer on its own: names by link-time address, build-ID guard, missing files.
#include "profiler/symbolizer.h"

#include <gtest/gtest.h>

#include <string>

#include "demo_functions.h"
#include "profiler/modules.h"

namespace hs_test {
namespace {

namespace prof = heapscope::prof;

struct MainModule {
  std::string build_id;
  uintptr_t load_bias = 0;
};

MainModule main_module() {
  MainModule main;
  prof::for_each_module_segment(
      [](const prof::ModuleSegment& segment, void* arg) {
        auto* out = static_cast<MainModule*>(arg);
        out->build_id = segment.build_id;
        out->load_bias = segment.load_bias;
        return false;  // the main executable comes first
      },
      &main);
  return main;
}

TEST(Symbolizer, FindsTheFunctionContainingAnAddress) {
  MainModule main = main_module();
  ASSERT_EQ(main.build_id.size(), 40u);
  DemoAddresses pcs = demo_addresses();
  prof::Symbolizer symbolizer;
  ASSERT_TRUE(symbolizer.init(1));
  prof::FoundSymbol big{}, small{}, again{};
  ASSERT_TRUE(symbolizer.find(0, "/proc/self/exe", main.build_id.c_str(),
                              pcs.big_member - 1 - main.load_bias, &big));
  EXPECT_STREQ(big.name, "_ZN4demo6Holder12allocate_bigEv");
  ASSERT_TRUE(symbolizer.find(0, "/proc/self/exe", main.build_id.c_str(),
                              pcs.small_c - 1 - main.load_bias, &small));
  EXPECT_STREQ(small.name, "demo_alloc_small_c");
  EXPECT_NE(big.key, small.key);
  // Same symbol, same key (the writer's one-Function-per-symbol rule relies on it).
  ASSERT_TRUE(symbolizer.find(0, "/proc/self/exe", "", pcs.small_c - main.load_bias, &again));
  EXPECT_EQ(again.key, small.key);
  EXPECT_LT(small.key, symbolizer.symbol_count());
  // Before the first function: nothing.
  EXPECT_FALSE(symbolizer.find(0, "/proc/self/exe", "", 0x10, &again));
}

TEST(Symbolizer, RefusesAFileWithAnotherBuildId) {
  MainModule main = main_module();
  DemoAddresses pcs = demo_addresses();
  prof::Symbolizer symbolizer;
  ASSERT_TRUE(symbolizer.init(1));
  prof::FoundSymbol found{};
  EXPECT_FALSE(symbolizer.find(0, "/proc/self/exe", "0123456789abcdef0123456789abcdef01234567",
                               pcs.small_c - 1 - main.load_bias, &found));
}

TEST(Symbolizer, MissingOrNonElfFilesGiveNoNames) {
  prof::Symbolizer symbolizer;
  ASSERT_TRUE(symbolizer.init(3));
  prof::FoundSymbol found{};
  EXPECT_FALSE(symbolizer.find(0, "/nonexistent/libnothing.so", "", 0x1000, &found));
  EXPECT_FALSE(symbolizer.find(1, "/proc/self/status", "", 0x1000, &found));  // not ELF
  EXPECT_FALSE(symbolizer.find(2, "/etc/hostname", "", 0x1000, &found));
  EXPECT_FALSE(symbolizer.find(7, "/proc/self/exe", "", 0x1000, &found));  // no such module
}

}  // namespace
}  // namespace hs_test
