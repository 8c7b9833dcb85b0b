#include "workloads/spsc_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

namespace wl = heapscope::workloads;

namespace {
// Distinct, ordered pointer values without integer-to-pointer casts.
char tokens[200001];
void* as_ptr(std::uintptr_t v) { return &tokens[v]; }
}  // namespace

TEST(SpscRing, FifoAndBounded) {
  wl::QueueMatrix q;
  ASSERT_TRUE(q.init(2, 6));  // rounds up to 8
  auto& r = q.ring(0, 1);
  EXPECT_EQ(r.pop(), nullptr);
  for (std::uintptr_t i = 1; i <= 8; ++i) EXPECT_TRUE(r.push(as_ptr(i)));
  EXPECT_FALSE(r.push(as_ptr(9)));
  for (std::uintptr_t i = 1; i <= 8; ++i) EXPECT_EQ(r.pop(), as_ptr(i));
  EXPECT_EQ(r.pop(), nullptr);
  EXPECT_EQ(q.ring(1, 0).pop(), nullptr) << "rings are independent";
}

// Two threads pass 200k values through a 64-slot ring; order and content preserved.
TEST(SpscRing, TwoThreadsPreserveOrder) {
  wl::QueueMatrix q;
  ASSERT_TRUE(q.init(2, 64));
  auto& r = q.ring(0, 1);
  constexpr std::uintptr_t kN = 200000;
  std::thread producer([&] {
    for (std::uintptr_t i = 1; i <= kN; ++i)
      while (!r.push(as_ptr(i))) std::this_thread::yield();
  });
  std::uintptr_t expected = 1;
  while (expected <= kN) {
    void* p = r.pop();
    if (p == nullptr) {
      std::this_thread::yield();
      continue;
    }
    ASSERT_EQ(p, as_ptr(expected));
    ++expected;
  }
  producer.join();
}
