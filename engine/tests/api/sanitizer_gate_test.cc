// The sanitizer presets' positive controls: a planted use-after-free and a planted signed
// overflow must kill a child process with the sanitizer's report, so a green asan run means
// the checks were live (flags as the preset builds them: -fno-sanitize-recover=all).
// Outside the asan preset these tests skip.
#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>

#include "../support/test_support.h"

namespace {

TEST(SanitizerGateDeathTest, AsanCatchesAPlantedUseAfterFree) {
  if (!hs_test::kAsan) GTEST_SKIP() << "only the asan preset carries AddressSanitizer";
  EXPECT_DEATH(
      {
        char* volatile block = static_cast<char*>(std::malloc(32));
        std::free(block);
        volatile char read = block[7];
        (void)read;
      },
      "heap-use-after-free");
}

TEST(SanitizerGateDeathTest, UbsanCatchesAPlantedSignedOverflow) {
  if (!hs_test::kAsan) GTEST_SKIP() << "only the asan preset carries UndefinedBehaviorSanitizer";
  EXPECT_DEATH(
      {
        volatile int big = INT_MAX;
        volatile int sum = big + 1;
        (void)sum;
      },
      "signed integer overflow");
}

}  // namespace
