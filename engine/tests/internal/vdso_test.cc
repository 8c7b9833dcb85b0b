// The vDSO lookup (platform/vdso_linux.h), compiled in: the clock the engine reads through it
// agrees with libc's, and a name the vDSO lacks is not found.
#include <gtest/gtest.h>
#include <time.h>

#include "../support/test_support.h"
#include "platform/vdso_linux.h"

namespace {

using ClockGettime = int (*)(clockid_t, timespec*);

long long nanoseconds(const timespec& ts) {
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

TEST(Vdso, ClockGettimeIsFoundAndReadsTheSameClockAsLibc) {
#if defined(__x86_64__)
  const char* name = "__vdso_clock_gettime";
#elif defined(__aarch64__)
  const char* name = "__kernel_clock_gettime";
#else
  GTEST_SKIP() << "no vDSO clock name known for this architecture";
#endif
  const auto read = reinterpret_cast<ClockGettime>(heapscope::os::vdso_function(name));
  if (read == nullptr && hs_test::under_emulator()) GTEST_SKIP() << "the emulator maps no vDSO";
  ASSERT_NE(read, nullptr) << name << " not found in the vDSO";
  for (clockid_t clock : {CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE, CLOCK_REALTIME}) {
    timespec before{};
    timespec through_vdso{};
    timespec after{};
    ASSERT_EQ(clock_gettime(clock, &before), 0);
    ASSERT_EQ(read(clock, &through_vdso), 0);
    ASSERT_EQ(clock_gettime(clock, &after), 0);
    EXPECT_LE(nanoseconds(before), nanoseconds(through_vdso)) << "clock " << clock;
    EXPECT_LE(nanoseconds(through_vdso), nanoseconds(after)) << "clock " << clock;
  }
}

TEST(Vdso, ANameItLacksIsNotFound) {
  EXPECT_EQ(heapscope::os::vdso_function("hs_no_such_function"), nullptr);
  EXPECT_EQ(heapscope::os::vdso_function(""), nullptr);
}

}  // namespace
