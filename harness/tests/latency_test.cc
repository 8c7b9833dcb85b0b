// The latency protocol end to end (harness/docs/protocol.md#latency): hs-workload's open-loop
// record, calibration of the schedule's rate, and through `hsbench run` / `report` two controls
// with allocators of known latency (tests/latency_shim.c): a planted stall (1 ms on every
// 10,000th malloc) must move p99.9 and not p50, and the same allocator under two names (A/A)
// must show an equivalent p50. Older raw runs (schema 2, no latency) still report and publish.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "campaign_test_util.h"
#include "harness/campaign/sample_runner.h"

namespace heapscope::harness::testing {
namespace {

using Json = nlohmann::json;

SampleOutcome run_child(const std::vector<std::string>& extra) {
  std::vector<std::string> argv{HS_WORKLOAD_EXE, "--workload", "tiny-hot", "--ops",
                                "50000",         "--seed",     "18"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_sample(argv, {"PATH=/usr/bin:/bin"}, 60);
}

// Off by default: no latency record, and asking for it gives one over every timed op.
TEST(Latency, ChildRecordsEveryTimedOpOnlyWhenAsked) {
  const SampleOutcome off = run_child({});
  ASSERT_TRUE(off.ok) << off.kind << ": " << off.reason << "\n" << off.stderr_tail;
  EXPECT_FALSE(off.measurement.contains("latency"));

  for (const char* rate : {"0", "2000000"}) {
    const SampleOutcome on = run_child({"--latency-rate", rate});
    ASSERT_TRUE(on.ok) << on.kind << ": " << on.reason << "\n" << on.stderr_tail;
    const auto& l = on.measurement["latency"];
    std::printf("rate %s: %s\n", rate, l.dump().c_str());
    EXPECT_EQ(l["method"], "open-loop-intended-start-v1");
    // tiny-hot: one stream op per allocator call.
    // One value per op of the region (tiny-hot: one allocator call each), none for the
    // untimed teardown.
    EXPECT_EQ(l["count"].get<std::uint64_t>(), on.measurement["ops"].get<std::uint64_t>());
    EXPECT_LE(l["p50_ns"].get<std::uint64_t>(), l["p99_ns"].get<std::uint64_t>());
    EXPECT_LE(l["p99_ns"].get<std::uint64_t>(), l["p999_ns"].get<std::uint64_t>());
    EXPECT_LE(l["p999_ns"].get<std::uint64_t>(), l["max_ns"].get<std::uint64_t>());
    EXPECT_GT(l["max_ns"].get<std::uint64_t>(), 0u);
    // The same stream whether timed or not.
    EXPECT_EQ(on.measurement["stream_digest"], off.measurement["stream_digest"]);
  }
  // An open-loop run is paced by its schedule: 50,000 ops at 2M ops/s take >= 25 ms.
  const SampleOutcome paced = run_child({"--latency-rate", "2000000"});
  ASSERT_TRUE(paced.ok);
  EXPECT_GE(paced.measurement["seconds"].get<double>(), 0.024);
}

// With a fixed op count and no fixed rate, one unthrottled baseline run measures the capacity;
// the schedule runs at --latency-load of it, frozen in the calibration record and the argv.
TEST(Latency, RateIsALoadFractionOfTheCalibratedCapacity) {
  ScratchDir dir("latency-rate");
  const CommandResult r = hsbench({"run",
                                   "--allocators",
                                   "glibc",
                                   "--workloads",
                                   "tiny-hot",
                                   "--threads",
                                   "1",
                                   "--blocks",
                                   "1",
                                   "--ops",
                                   "50000",
                                   "--seed",
                                   "5",
                                   "--latency-load",
                                   "0.25",
                                   "--return-points",
                                   "0.1",
                                   "--baseline",
                                   "glibc",
                                   "--out",
                                   dir / "raw.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json raw = read_json(dir / "raw.json");
  EXPECT_EQ(raw["schema_version"], 4);
  EXPECT_EQ(raw["campaign"]["latency"], true);
  const Json& cal = raw["calibration"][0];
  ASSERT_TRUE(cal.contains("latency_rate_ops_per_sec")) << cal.dump();
  const double capacity = cal["latency_capacity_ops_per_sec"].get<double>();
  const double rate = cal["latency_rate_ops_per_sec"].get<double>();
  std::printf("capacity %.0f ops/s, rate %.0f ops/s\n", capacity, rate);
  EXPECT_NEAR(rate, 0.25 * capacity, 1.0);
  const Json& sample = raw["samples"][0];
  ASSERT_EQ(sample["status"], "ok") << sample.dump();
  EXPECT_EQ(sample["measurement"]["latency"]["rate_ops_per_sec"].get<double>(), rate);
}

// The controls' campaign: pass (baseline), pass-aa (the same library under another name) and
// stall, tiny-hot at one thread, 21 blocks of 25,000 ops at a fixed 100,000 ops/s (0.25 s a
// sample). The rate is fixed, not derived, because the stall's footprint is rate x 1 ms: the
// stall delays the ~100 ops due during it, one stall per sample (12,500 mallocs) ~ 0.4% of the
// ops, so p99.9 (the slowest 0.1%) lands inside the stall at ~0.75 ms while p50 is far away.
// The rate also keeps the worker spinning between ops (10 us apart) instead of sleeping, so the
// baseline's tail is the machine's, not the scheduler's wake-ups. Many short blocks rather than
// few long ones: the machine changes state for seconds at a time (seen here: every process's
// p50 going from 63 to 87-91 ns and back), and a change inside a block spoils that block's
// ratio whatever its length. The 95% interval of the median sits near the 3rd-lowest of 11
// blocks' ratios (two spoilt A/A blocks put its low end at 0.69-0.74) but near the 6th of 21.
// Both controls need a machine whose own scheduling gaps stay below a third of the planted 1 ms
// stall at the p99.9 of samples without one. On a machine so loaded that the scheduler takes the
// CPU away for milliseconds at a time (seen here: load 8-12 on 2 vCPUs gave p99.9 of 8 ms with
// nothing planted; one busy loop beside the test, 1.7 ms), no wall-clock latency measurement can
// see a 1 ms stall, and the controls skip with the numbers instead of asserting on noise.
// Checked on the unplanted samples' own numbers, never on the machine's speed.
constexpr double kNoiseFloorNs = 300'000;

// One test, so the 63-sample campaign runs once per test run (CTest starts every case in a
// process of its own): the record and the report always, then the two controls unless the
// baseline shows the machine too noisy for them.
TEST(LatencyControls, PlantedStallMovesP999NotP50AndAaP50IsEquivalent) {
  ScratchDir dir("latency-controls");
  const CommandResult r = hsbench({"run",
                                   "--allocators",
                                   "pass,pass-aa,stall",
                                   "--allocator",
                                   std::string("pass=") + HS_PASS_SHIM,
                                   "--allocator",
                                   std::string("pass-aa=") + HS_PASS_SHIM,
                                   "--allocator",
                                   std::string("stall=") + HS_STALL_SHIM,
                                   "--workloads",
                                   "tiny-hot",
                                   "--threads",
                                   "1",
                                   "--blocks",
                                   "21",
                                   "--ops",
                                   "25000",
                                   "--seed",
                                   "18",
                                   "--latency-rate",
                                   "100000",
                                   "--return-points",
                                   "0.1",
                                   "--baseline",
                                   "pass",
                                   "--out",
                                   dir / "raw.json"},
                                  300000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CommandResult rep =
      hsbench({"report", dir / "raw.json", "--summary-out", dir / "summary.json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  std::cout << rep.out << rep.err;

  // The record: every sample timed at the fixed rate, the report's latency table, a summary and
  // a site the site's schemas accept.
  EXPECT_TRUE(contains(rep.out, "latency: open loop")) << rep.out;
  const Json raw = read_json(dir / "raw.json");
  EXPECT_EQ(raw["schema_version"], 4);
  for (const Json& s : raw["samples"]) {
    ASSERT_EQ(s["status"], "ok") << s.dump();
    const Json& l = s["measurement"]["latency"];
    EXPECT_EQ(l["rate_ops_per_sec"].get<double>(), 100000.0);
    EXPECT_GT(l["count"].get<std::uint64_t>(), 0u);
  }
  const Json summary = read_json(dir / "summary.json");
  const auto latency_row = [&](const std::string& allocator) {
    return summary_row(summary, "tiny-hot", 1, allocator)["latency"];
  };
  const Json base = latency_row("pass");
  EXPECT_EQ(base["samples"], 21);
  EXPECT_TRUE(base["p999_effect_vs_baseline"].is_null());  // the baseline itself
  const CommandResult pub = hsbench({"publish", dir / "raw.json", "--out", dir / "site"});
  EXPECT_EQ(pub.exit_code, 0) << pub.err;

  // The controls' precondition, read from the samples without a planted stall (pass and
  // pass-aa, see kNoiseFloorNs): at most 4 of their 42 with a p99.9 above the noise floor. The
  // interval of 21 blocks' median tolerates that many spoilt blocks, not a burst of them.
  const Json stall = latency_row("stall");
  ASSERT_FALSE(stall.is_null());
  const double base_p999 = base["p999_ns"]["median"].get<double>();
  const double stall_p999 = stall["p999_ns"]["median"].get<double>();
  std::printf("p99.9 median: pass %.0f ns, stall %.0f ns\n", base_p999, stall_p999);
  int noisy = 0;
  double worst = 0;
  for (const Json& s : raw["samples"]) {
    if (s["allocator"] == "stall") continue;
    const double p999 = s["measurement"]["latency"]["p999_ns"].get<double>();
    worst = std::max(worst, p999);
    if (p999 > kNoiseFloorNs) ++noisy;
  }
  if (noisy > 4) {
    GTEST_SKIP() << noisy << " of the 42 samples without a planted stall had a p99.9 above "
                 << kNoiseFloorNs / 1e3 << " us (worst " << worst / 1e3
                 << " us): this machine took the CPU from the child for about as long as the "
                    "planted 1 ms stall; rerun on a quiet machine";
  }

  // Planted stall. Effects are baseline / candidate (lower is better): far below 1.
  EXPECT_GE(stall_p999, 3 * base_p999);
  EXPECT_GE(stall_p999, 100'000.0);  // a 1 ms stall charged to the ops due during it
  const Json& p999 = stall["p999_effect_vs_baseline"];
  ASSERT_TRUE(p999["ci_valid"].get<bool>()) << p999.dump();
  // Moved: far (median effect below a third) and beyond chance (the interval excludes 1). The
  // interval's upper end is not held to a third: it is one of the larger blocks' ratios, and a
  // block in which a neighbour took the CPU from the baseline for a millisecond sets it.
  EXPECT_LT(p999["effect"].get<double>(), 1.0 / 3) << p999.dump();
  EXPECT_LT(p999["ci_high"].get<double>(), 1.0) << p999.dump();
  const Json& stall_p50 = stall["p50_effect_vs_baseline"];
  EXPECT_NEAR(stall_p50["effect"].get<double>(), 1.0, 0.10) << stall_p50.dump();

  // A/A: the same library under two names. A true A/A interval excludes 1 about 5% of the time,
  // so the assertion is equivalence: the median effect within 10% and the whole p50 interval
  // within 25%. p50 is ~70 ns here (two clock reads and a malloc), and separate processes of the
  // same library differ by up to ~20% on it (placement in the caches, which core): per-block
  // ratios of 0.78 were seen between two runs of one library.
  const Json aa = latency_row("pass-aa");
  const Json& aa_p50 = aa["p50_effect_vs_baseline"];
  ASSERT_TRUE(aa_p50["ci_valid"].get<bool>()) << aa_p50.dump();
  std::printf("A/A p50 effect %s\n", aa_p50.dump().c_str());
  EXPECT_NEAR(aa_p50["effect"].get<double>(), 1.0, 0.10) << aa_p50.dump();
  EXPECT_GE(aa_p50["ci_low"].get<double>(), 0.75) << aa_p50.dump();
  EXPECT_LE(aa_p50["ci_high"].get<double>(), 1.0 / 0.75) << aa_p50.dump();
}

// Raw runs of schema version 2 (memory, no latency) still report and publish, without latency.
TEST(Latency, SchemaVersion2RawRunStillReportsAndPublishes) {
  ScratchDir dir("latency-v2");
  const std::string v2 = HS_REPORT_TESTDATA "/campaign_memory.raw.json";
  ASSERT_EQ(read_json(v2)["schema_version"], 2);
  const CommandResult rep = hsbench({"report", v2});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_TRUE(contains(rep.out, "memory: RssAnon"));
  EXPECT_FALSE(contains(rep.out, "latency:"));
  const CommandResult pub = hsbench({"publish", v2, "--out", dir / "site"});
  EXPECT_EQ(pub.exit_code, 0) << pub.err;
  const CommandResult ver = hsbench({"verify", dir / "site"});
  EXPECT_EQ(ver.exit_code, 0) << ver.err;
}

}  // namespace
}  // namespace heapscope::harness::testing
