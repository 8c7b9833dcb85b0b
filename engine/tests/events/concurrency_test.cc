// Memory events under threads (also run under TSan): callbacks installed, replaced and cleared
// while other threads allocate, with each replaced argument destroyed as soon as the install
// returns; tracking switched on and off while blocks cross the boundary, with the live figures
// exact (zero) once every block of the last period is freed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/splitmix64.h"
#include "event_recorder.h"

namespace hs_events_test {
namespace {

constexpr int kThreads = 4;

struct Counter {
  std::atomic<uint64_t> calls{0};
  uint64_t canary = 0x5AFE;
};

void count_call(const hs_memory_change_t*, void* arg) {
  Counter* c = static_cast<Counter*>(arg);
  EXPECT_EQ(c->canary, 0x5AFEu);  // still alive: the install waits for running calls
  c->calls.fetch_add(1, std::memory_order_relaxed);
  // Allocating inside a callback is allowed and untracked.
  void* p = hs_malloc(24);
  hs_free(p);
}

// Rounds finished by all churn threads: the installing thread waits for some before it stops
// them, so the churn has run even when a loaded machine schedules it late.
std::atomic<uint64_t> g_churn_rounds{0};

void churn(int seed, std::atomic<bool>* stop, int per_round) {
  heapscope::base::SplitMix64 rng(static_cast<uint64_t>(seed));
  std::vector<void*> live(64, nullptr);
  for (; !stop->load(std::memory_order_relaxed); g_churn_rounds.fetch_add(1)) {
    for (int i = 0; i < per_round; i++) {
      uint64_t roll = rng.next();
      void*& slot = live[roll % live.size()];
      if (slot == nullptr) {
        slot = hs_malloc((roll >> 16) % 2048);
      } else if ((roll >> 40) % 4 == 0) {
        slot = hs_realloc(slot, (roll >> 16) % 4096 + 1);
      } else {
        hs_free(slot);
        slot = nullptr;
      }
    }
  }
  for (void* p : live) hs_free(p);
}

TEST(MemoryEventsConcurrency, InstallAndClearWhileOthersAllocate) {
  hs_memory_events_set_enabled(true);
  g_churn_rounds = 0;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(churn, 100 + t, &stop, 256);
  uint64_t seen = 0;
  for (int round = 0; round < 300; round++) {
    Counter* counter = new Counter;
    auto kind = static_cast<hs_memory_change_kind_t>(round % HS_MEMORY_CHANGE_KINDS);
    EXPECT_EQ(hs_memory_events_set_callback(kind, count_call, counter), kEventsOn);
    std::this_thread::yield();
    hs_memory_events_set_callback(kind, nullptr, nullptr);
    seen += counter->calls.load();
    counter->canary = 0;  // a call still running with it would now fail
    delete counter;
  }
  while (g_churn_rounds.load() < 4 * kThreads) std::this_thread::yield();
  stop = true;
  for (std::thread& t : threads) t.join();
  hs_memory_snapshot_t s = take_snapshot();
  hs_memory_events_set_enabled(false);
  if (kEventsOn) {
    EXPECT_EQ(s.live_count, 0u);
    EXPECT_EQ(s.live_bytes, 0u);
    EXPECT_GT(s.accum_count, 0u);
  } else {
    EXPECT_EQ(seen, 0u);
  }
}

TEST(MemoryEventsConcurrency, EnableDisableMidRunNeverWraps) {
  hs_memory_events_set_enabled(false);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(churn, 200 + t, &stop, 64);
  for (int round = 0; round < 400; round++) {
    hs_memory_events_set_enabled(round % 2 == 0);
    hs_memory_snapshot_t s = take_snapshot();
    if (kEventsOn) {
      ASSERT_LT(s.live_bytes, uint64_t{1} << 62);
      ASSERT_LT(s.live_count, uint64_t{1} << 62);
    }
    std::this_thread::yield();
  }
  hs_memory_events_set_enabled(true);  // the last period: every block it sees is freed below
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop = true;
  for (std::thread& t : threads) t.join();
  hs_memory_snapshot_t s = take_snapshot();
  hs_memory_events_set_enabled(false);
  if (kEventsOn) {
    EXPECT_EQ(s.live_count, 0u);
    EXPECT_EQ(s.live_bytes, 0u);
  }
}

// Threads whose heaps are warm (every small and medium size has a page in its direct table,
// their segments entered untracked) when another thread switches tracking on: from the moment
// the switch returns, every one of their allocations and frees counts, including blocks on
// segments entered while tracking; once it is off again, none does. Rounds alternate off
// (the first: the warm-up) and on, so tables are diverted, repaired and diverted again.
std::atomic<int> g_phase{0};
std::atomic<int> g_done{0};

void warm_then_count(int seed, int allocations) {
  heapscope::base::SplitMix64 rng(static_cast<uint64_t>(seed));
  auto burst = [&] {
    std::vector<void*>* blocks = new std::vector<void*>();
    blocks->reserve(static_cast<size_t>(allocations));
    for (int i = 0; i < allocations; i++) {
      // 1 in 8 a 16-64 KiB block: enough of them to need segments entered during the burst.
      size_t size = rng.below(8) == 0 ? 16384 + rng.below(49152) : 1 + rng.below(1024);
      blocks->push_back(hs_malloc(size));
    }
    for (void* p : *blocks) hs_free(p);
    delete blocks;
  };
  for (int round = 0; round < 7; round++) {
    while (g_phase.load() != 2 * round + 1) std::this_thread::yield();
    burst();
    g_done.fetch_add(1);
  }
}

TEST(MemoryEventsConcurrency, WarmThreadsAreTrackedFromTheSwitchOn) {
  if (!kEventsOn) GTEST_SKIP() << "memory events compiled out";
  constexpr int kAllocations = 2000;
  hs_memory_events_set_enabled(false);
  g_phase = 0;
  g_done = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(warm_then_count, 300 + t, kAllocations);
  for (int round = 0; round < 7; round++) {
    bool tracking = round % 2 == 1;
    hs_memory_events_set_enabled(tracking);
    hs_memory_snapshot_t before = take_snapshot();
    g_phase = 2 * round + 1;
    while (g_done.load() != kThreads * (round + 1)) std::this_thread::yield();
    hs_memory_snapshot_t after = take_snapshot();
    SCOPED_TRACE(testing::Message() << "round " << round);
    // The hs_* calls of each burst (the vector itself comes from the C library's malloc: this
    // test links the hs_* library, which replaces nothing).
    uint64_t expected = tracking ? uint64_t{kThreads} * kAllocations : 0;
    EXPECT_EQ(after.accum_count - before.accum_count, expected);
    EXPECT_EQ(after.live_count, 0u);
    EXPECT_EQ(after.live_bytes, 0u);
    g_phase = 2 * round + 2;
  }
  for (std::thread& t : threads) t.join();
  hs_memory_events_set_enabled(false);
}

// A fork while another thread holds a shard lock (here: a visitor inside its callback): the
// fork waits for it, so the child finds every lock free and can snapshot and track. Without
// the fork handlers the child inherits the held lock and its snapshot spins until the alarm.
std::atomic<int> g_visitor_inside{0};

bool slow_visitor(void*, size_t, void*) {
  g_visitor_inside.store(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return false;  // one block is enough
}

TEST(MemoryEventsConcurrency, ForkWhileAVisitorHoldsAShardLeavesTheChildUsable) {
  if (!kEventsOn) GTEST_SKIP() << "memory events compiled out";
#if defined(__SANITIZE_THREAD__)
  // The child sees the parent's visitor thread as never joined, and TSan's exit check then
  // reports a thread leak and changes the child's exit status (ASan and Release run it).
  GTEST_SKIP() << "TSan reports the parent's threads as leaked when a fork child exits";
#endif
  hs_memory_events_set_enabled(true);
  std::vector<void*> blocks;
  for (int i = 0; i < 256; i++) blocks.push_back(hs_malloc(64));  // some shard holds one
  g_visitor_inside = 0;
  std::thread visitor([] { hs_memory_events_visit(slow_visitor, nullptr); });
  while (g_visitor_inside.load() == 0) std::this_thread::yield();
  pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    alarm(5);  // a deadlocked child dies of SIGALRM
    hs_memory_snapshot_t s = take_snapshot();
    void* p = hs_malloc(100);
    hs_memory_snapshot_t after = take_snapshot();
    hs_free(p);
    _exit(after.live_count == s.live_count + 1 ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  visitor.join();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child status " << status
      << (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? " (deadlocked on an inherited lock)"
                                                             : "");
  for (void* p : blocks) hs_free(p);
  hs_memory_events_set_enabled(false);
}

}  // namespace
}  // namespace hs_events_test
