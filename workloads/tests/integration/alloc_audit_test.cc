// The timed region makes no harness allocation: under the counting shim, the calls seen
// between the region markers are exactly the stream's own allocator calls, per kind.
// thread-churn is the one declared exemption: creating and retiring threads is its
// workload, and glibc's thread exit makes its own free() calls (measured: 16 per exiting
// thread, glibc 2.36), which the shim sees.
#include <gtest/gtest.h>

#include "child_process.h"

using hs_test::run_child;

namespace {

nlohmann::json audited(const std::string& workload, const std::string& threads,
                       bool plant = false) {
  const std::string ops = workload == "large-buffers" ? "1000" : "30000";  // page faults
  std::vector<std::string> args = {"--workload", workload, "--threads", threads,
                                   "--ops",      ops,      "--seed",    "7"};
  if (plant) args.push_back("--plant-harness-alloc");
  const auto r = run_child(args, HS_COUNTING_SHIM);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.json.is_object() && r.json.contains("shim")) << "shim not seen: " << r.out;
  return r.json;
}

}  // namespace

TEST(AllocAudit, TimedRegionMakesExactlyTheStreamsCalls) {
  for (const auto& w : hs_test::kAllWorkloads) {
    if (w == "thread-churn") continue;
    for (const char* threads : {"1", "2", "4"}) {
      const auto j = audited(w, threads);
      if (!j.contains("shim")) continue;
      EXPECT_EQ(j["shim"], j["calls"]) << w << " threads=" << threads;
      EXPECT_GT(j["calls"]["total"].get<std::uint64_t>(), 0u);
    }
  }
}

TEST(AllocAudit, ThreadChurnExtraCallsAreOnlyThreadCreation) {
  for (const char* threads : {"1", "2"}) {
    const auto j = audited("thread-churn", threads);
    if (!j.contains("shim")) continue;
    const auto created = j["threads_created_in_region"].get<std::uint64_t>();
    EXPECT_EQ(created, 7u * std::stoul(threads));  // generations 1..7 spawn in the region
    for (const char* kind : {"malloc", "free", "realloc", "calloc", "aligned"}) {
      const auto seen = j["shim"][kind].get<std::uint64_t>();
      const auto own = j["calls"][kind].get<std::uint64_t>();
      EXPECT_GE(seen, own) << kind;
      // Threads exiting in the region: every generation's (the first was created before).
      const std::uint64_t exits = created + std::stoul(threads);
      EXPECT_LE(seen - own, 32 * exits) << kind << ": more than thread lifetimes explain";
    }
    std::cout << "thread-churn T=" << threads << ": shim " << j["shim"].dump() << " vs stream "
              << j["calls"].dump() << '\n';
  }
}

// Positive control: one deliberate harness malloc/free inside the region is seen.
TEST(AllocAudit, PlantedHarnessAllocationIsCaught) {
  for (const char* w : {"tiny-hot", "cross-thread", "long-lived"}) {
    const auto j = audited(w, "2", /*plant=*/true);
    if (!j.contains("shim")) continue;
    EXPECT_NE(j["shim"], j["calls"]) << w;
    EXPECT_EQ(j["shim"]["malloc"].get<std::uint64_t>(),
              j["calls"]["malloc"].get<std::uint64_t>() + 1);
    EXPECT_EQ(j["shim"]["free"].get<std::uint64_t>(), j["calls"]["free"].get<std::uint64_t>() + 1);
  }
}

TEST(AllocAudit, NoShimNoMarkers) {
  const auto r = run_child({"--workload", "tiny-hot", "--ops", "1000"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.json.contains("shim"));
}
