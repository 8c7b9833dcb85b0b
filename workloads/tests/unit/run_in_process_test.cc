// Every workload, run for real in this process (glibc, or the sanitizer's allocator)
// with the verify pass: contents survive, nothing leaks from the slot tables, the
// digest equals the materialized one, and cross-thread queues neither lose nor
// duplicate blocks.
#include <gtest/gtest.h>

#include "workloads/runner.h"

namespace wl = heapscope::workloads;

namespace {
// TSan makes every op and handoff several times slower: a quarter of the ops there (still
// thousands of cross-thread handoffs per run), which halves the TSan job's longest tests.
#if defined(__SANITIZE_THREAD__)
constexpr std::uint64_t kOpsDivisor = 4;
#else
constexpr std::uint64_t kOpsDivisor = 1;
#endif
// Large buffers fault in ~256 fresh pages per call: keep that one short.
std::uint64_t ops_for(const wl::WorkloadSpec& w) {
  return (w.name == "large-buffers" ? 400 : 20000) / kOpsDivisor;
}
}  // namespace

TEST(RunInProcess, EveryWorkloadVerifiesAtOneTwoAndThreeThreads) {
  for (const auto& w : wl::all_workloads()) {
    for (unsigned threads : {1u, 2u, 3u}) {
      const wl::RunResult r = wl::run_workload({.spec = &w,
                                                .threads = threads,
                                                .ops = ops_for(w),
                                                .seed = 11,
                                                .block = 2,
                                                .verify = true});
      ASSERT_TRUE(r.error.empty()) << r.error;
      EXPECT_TRUE(r.verified);
      EXPECT_EQ(r.verify.total(), 0u) << w.name << " T=" << threads;
      EXPECT_EQ(r.alloc_failures, 0u);
      EXPECT_GT(r.seconds, 0.0);
      EXPECT_EQ(r.digest, wl::materialize(w, threads, ops_for(w), 11, 2).digest) << w.name;
      EXPECT_EQ(r.worker_seeds.size(), threads);
      if (w.topology == wl::Topology::kChurn) {
        EXPECT_EQ(r.threads_created_in_region, 7 * threads);
      }
    }
  }
}

TEST(RunInProcess, OversubscribedCrossThreadCompletes) {
  for (const char* name : {"cross-thread", "producer-consumer"}) {
    const wl::RunResult r = wl::run_workload(
        {.spec = wl::find_workload(name), .threads = 8, .ops = 40000, .seed = 1, .verify = true});
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.verify.total(), 0u) << name;
  }
}

TEST(RunInProcess, RejectsBadConfig) {
  const auto* w = wl::find_workload("tiny-hot");
  EXPECT_FALSE(wl::run_workload({.spec = w, .threads = 0, .ops = 10}).error.empty());
  EXPECT_FALSE(wl::run_workload({.spec = w, .threads = 1, .ops = 0}).error.empty());
  EXPECT_FALSE(wl::run_workload({.spec = w, .threads = 65, .ops = 10}).error.empty());
  EXPECT_FALSE(wl::run_workload({.spec = nullptr, .threads = 1, .ops = 10}).error.empty());
}

// Latency mode (harness/docs/protocol.md#latency) on every topology: unthrottled and paced, the
// merged histogram holds one value per timed stream op, the contents still verify, and the
// stream is the same one.
TEST(RunInProcess, EveryWorkloadRecordsLatencyOpenLoop) {
  for (const auto& w : wl::all_workloads()) {
    for (unsigned threads : {1u, 2u}) {
      for (const double rate : {0.0, 4e6}) {
        const std::uint64_t ops = (w.name == "large-buffers" ? 200 : 8000) / kOpsDivisor;
        const wl::RunResult r = wl::run_workload({.spec = &w,
                                                  .threads = threads,
                                                  .ops = ops,
                                                  .seed = 11,
                                                  .block = 2,
                                                  .verify = true,
                                                  .latency_rate = rate});
        ASSERT_TRUE(r.error.empty()) << r.error;
        EXPECT_EQ(r.verify.total(), 0u) << w.name << " T=" << threads;
        ASSERT_TRUE(r.latency.has_value()) << w.name;
        EXPECT_GT(r.latency->count(), 0u) << w.name;
        // Independent workers: one value per allocator call of the region, none for the
        // untimed setup (long-lived builds its live set there) or teardown.
        if (w.topology == wl::Topology::kLocal) {
          EXPECT_EQ(r.latency->count(), r.calls.total()) << w.name;
        }
        EXPECT_LE(r.latency->quantile(0.5), r.latency->quantile(0.999)) << w.name;
        EXPECT_LE(r.latency->quantile(0.999), r.latency->max()) << w.name;
        EXPECT_EQ(r.digest, wl::materialize(w, threads, ops, 11, 2).digest) << w.name;
        if (rate > 0) {  // paced: the last op is due at (count / threads - 1) / (rate / threads)
          const double schedule =
              (static_cast<double>(r.latency->count()) / threads - 1) / (rate / threads);
          EXPECT_GE(r.seconds, 0.9 * schedule) << w.name << " T=" << threads;
        }
      }
    }
  }
  const wl::RunResult off = wl::run_workload(
      {.spec = wl::find_workload("tiny-hot"), .threads = 1, .ops = 1000, .seed = 1});
  EXPECT_FALSE(off.latency.has_value());  // off by default
}
