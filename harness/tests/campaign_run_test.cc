// hsbench run / report / reproduce end to end, with real hs-workload children.
#include <gtest/gtest.h>

#include <map>

#include "harness/tests/campaign_test_util.h"
#include "stats/paired_effect.h"

namespace heapscope::harness::testing {
namespace {

const std::vector<std::string> kTiny = {"run",         "--allocators", "glibc,jemalloc",
                                        "--workloads", "tiny-hot",     "--threads",
                                        "1",           "--blocks",     "4",
                                        "--ops",       "20000",        "--seed",
                                        "77"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// block -> order, and block -> digests, from a raw run.
std::map<int, std::vector<std::string>> orders_of(const nlohmann::json& raw) {
  std::map<int, std::vector<std::string>> m;
  for (const auto& o : raw["orders"]) m[o["block"]] = o["order"].get<std::vector<std::string>>();
  return m;
}
std::map<std::string, std::string> digests_of(const nlohmann::json& raw) {
  std::map<std::string, std::string> m;
  for (const auto& s : raw["samples"]) m[s["id"]] = s["measurement"]["stream_digest"];
  return m;
}

TEST(Campaign, TinyCampaignRecordsEverythingAndReports) {
  ScratchDir dir("tiny");
  const CommandResult r = hsbench(with(kTiny, {"--out", dir / "raw.json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "ETA")) << r.err;
  const auto raw = read_json(dir / "raw.json");
  EXPECT_EQ(raw["schema"], "heapscope.raw-run");
  EXPECT_EQ(raw["schema_version"], 4);
  EXPECT_EQ(raw["complete"], true);
  EXPECT_EQ(raw["seed"], 77);
  EXPECT_EQ(raw["campaign"]["seed"], 77);
  ASSERT_EQ(raw["samples"].size(), 8u);
  EXPECT_FALSE(raw["hosts"][0]["cpu_model"].get<std::string>().empty());
  for (const auto& a : raw["allocators"]) EXPECT_EQ(a["sha256"].get<std::string>().size(), 64u);
  for (const auto& s : raw["samples"]) {
    EXPECT_EQ(s["status"], "ok") << s.dump();
    // Clean environment: PATH, LD_PRELOAD for jemalloc, and the engine's optional subsystems
    // switched off (they matter only under the engine, but the rule is the same for every row).
    const auto env = s["env"].get<std::vector<std::string>>();
    EXPECT_EQ(env.size(), s["allocator"] == "glibc" ? 3u : 4u) << s.dump();
    EXPECT_TRUE(contains(s["env"].dump(), "\"HEAPSCOPE_PROF=0\"")) << s.dump();
    EXPECT_TRUE(contains(s["env"].dump(), "\"HEAPSCOPE_MEMORY_EVENTS=0\"")) << s.dump();
    EXPECT_TRUE(contains(s["argv"].dump(), "--expect-allocator"));
    // The memory protocol ran to its end (harness/docs/protocol.md#memory).
    EXPECT_TRUE(contains(s["argv"].dump(), "--memory-fd"));
    ASSERT_TRUE(s.contains("memory")) << s.dump();
    EXPECT_EQ(s["memory"]["complete"], true) << s.dump();
    EXPECT_GT(s["memory"]["samples"].get<int>(), 0) << s.dump();
    EXPECT_GE(s["memory"]["peak_anon_bytes"], s["memory"]["baseline_anon_bytes"]);
  }
  // Within a block every allocator replayed the same stream; blocks differ.
  std::map<int, std::set<std::string>> per_block;
  for (const auto& s : raw["samples"]) {
    per_block[s["block"]].insert(s["measurement"]["stream_digest"].get<std::string>());
  }
  std::set<std::string> all;
  for (const auto& [block, digests] : per_block) {
    EXPECT_EQ(digests.size(), 1u) << "block " << block;
    all.insert(*digests.begin());
  }
  EXPECT_EQ(all.size(), 4u);

  const CommandResult rep = hsbench({"report", dir / "raw.json", "--summary-out", dir / "s.json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_TRUE(contains(rep.out, "tiny-hot t=1")) << rep.out;
  const auto summary = read_json(dir / "s.json");
  EXPECT_EQ(summary["schema"], "heapscope.campaign-summary");
  ASSERT_EQ(summary["cells"].size(), 1u);
  ASSERT_EQ(summary["cells"][0]["allocators"].size(), 2u);
  EXPECT_EQ(summary["baseline"], "glibc");  // mimalloc is not in this campaign
  const auto je = summary_row(summary, "tiny-hot", 1, "jemalloc");
  ASSERT_FALSE(je.is_null());
  EXPECT_EQ(je["n"], 4);
  EXPECT_EQ(je["effect_vs_baseline"]["paired_blocks"], 4);
  EXPECT_TRUE(je["effect_vs_baseline"]["ci_valid"].get<bool>());
  // Same raw data, byte-identical summary.
  ASSERT_EQ(hsbench({"report", dir / "raw.json", "--summary-out", dir / "s2.json"}).exit_code, 0);
  EXPECT_EQ(read_file(dir / "s.json"), read_file(dir / "s2.json"));

  // Reproduce a recorded sample: same digest, exit 0.
  const CommandResult rp = hsbench({"reproduce", dir / "raw.json", "tiny-hot/t1/b2/jemalloc"});
  EXPECT_EQ(rp.exit_code, 0) << rp.out << rp.err;
  EXPECT_TRUE(contains(rp.out, "stream digest matches")) << rp.out;
  const CommandResult missing = hsbench({"reproduce", dir / "raw.json", "no/such/sample"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(contains(missing.err, "no sample")) << missing.err;
}

TEST(Campaign, SameSeedSameOrdersAndDigests) {
  ScratchDir dir("seed");
  ASSERT_EQ(hsbench(with(kTiny, {"--out", dir / "a.json"})).exit_code, 0);
  ASSERT_EQ(hsbench(with(kTiny, {"--out", dir / "b.json"})).exit_code, 0);
  auto other = kTiny;
  other.back() = "78";
  ASSERT_EQ(hsbench(with(other, {"--out", dir / "c.json"})).exit_code, 0);
  const auto a = read_json(dir / "a.json");
  const auto b = read_json(dir / "b.json");
  const auto c = read_json(dir / "c.json");
  EXPECT_EQ(orders_of(a), orders_of(b));
  EXPECT_EQ(digests_of(a), digests_of(b));
  EXPECT_EQ(a["calibration"], b["calibration"]);
  const auto da = digests_of(a);
  const auto dc = digests_of(c);
  for (const auto& [id, digest] : da) EXPECT_NE(digest, dc.at(id)) << id;
}

// A planted slow allocator (every call serialized + a busy delay) must be flagged slower on
// the cross-thread workload; glibc listed twice (A/A) must not be. The strict assertions are
// on the 1-thread cell (self-handoff through the ring): on this shared 2-vCPU machine a
// 2-worker handoff cell sees scheduler stalls of 30x in single samples when the machine is
// loaded, so there only the point estimate is checked. The A/A assertion uses a 99% interval
// recomputed from the raw data: at 95% the percentile bootstrap of a median has a ~7%
// false-alarm rate at this block count (stats/README.md), too flaky for a test. Labelled
// timing (run alone): beside another test on 2 CPUs the 2-worker cell's medians went bimodal
// (glibc 1.7 vs its A/A copy 14.4 Mops/s) and the point estimate with them.
TEST(Campaign, PlantedSlowAllocatorFlaggedAndAaControlCoversOne) {
  ScratchDir dir("slow");
  const CommandResult r = hsbench({"run",
                                   "--allocators",
                                   "glibc,glibc-aa,slow",
                                   "--allocator",
                                   std::string("glibc-aa=") + HS_LIBC,
                                   "--allocator",
                                   std::string("slow=") + HS_SLOW_SHIM,
                                   "--workloads",
                                   "cross-thread",
                                   "--threads",
                                   "1,2",
                                   "--blocks",
                                   "11",
                                   "--ops",
                                   "400000",
                                   "--seed",
                                   "5",
                                   "--baseline",
                                   "glibc",
                                   "--out",
                                   dir / "raw.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CommandResult rep = hsbench({"report", dir / "raw.json", "--summary-out", dir / "s.json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  std::cout << rep.out;
  const auto summary = read_json(dir / "s.json");
  const auto slow = summary_row(summary, "cross-thread", 1, "slow")["effect_vs_baseline"];
  ASSERT_TRUE(slow["ci_valid"].get<bool>()) << slow.dump();
  EXPECT_LT(slow["ci_high"].get<double>(), 1.0) << slow.dump();
  EXPECT_LT(slow["effect"].get<double>(), 0.9) << slow.dump();
  // At two threads cross-thread is bound by the two threads' contention, not by the shim's
  // delay (glibc: 1.9 Mops/s there against 127 at one thread, its IQR many times its median),
  // so the planted cost shows diluted (0.86 against glibc and 0.90 against glibc-aa in one
  // clean-clone run, where 0.9 was the bound). Held to "slower" only.
  const auto slow2 = summary_row(summary, "cross-thread", 2, "slow")["effect_vs_baseline"];
  EXPECT_LT(slow2["effect"].get<double>(), 1.0) << slow2.dump();

  // Pairs (protocol.md#pairs) on the same run: the planted slow allocator against the A/A copy
  // shows its cost (> 10% extra time, interval excluding 0), the same effect the baseline
  // column gives it; a pair naming an allocator the run lacks is an error.
  const CommandResult paired =
      hsbench({"report", dir / "raw.json", "--pair", "slow:glibc-aa", "--pair", "glibc-aa:glibc",
               "--summary-out", dir / "pairs.json"});
  ASSERT_EQ(paired.exit_code, 0) << paired.err;
  EXPECT_TRUE(contains(paired.out, "pairs: candidate against its own reference")) << paired.out;
  const auto with_pairs = read_json(dir / "pairs.json");
  ASSERT_EQ(with_pairs["pairs"].size(), 2u);
  const auto& slow_pair = with_pairs["pairs"][0];
  EXPECT_EQ(slow_pair["candidate"], "slow");
  EXPECT_EQ(slow_pair["reference"], "glibc-aa");
  // The same checks as the baseline column's: at one thread the effect and its interval, at
  // two only the direction (see above).
  for (const auto& c : slow_pair["cells"]) {
    const auto& e = c["effect"];
    ASSERT_TRUE(e["ci_valid"].get<bool>()) << e.dump();
    if (c["threads"] == 1) {
      EXPECT_LT(e["effect"].get<double>(), 0.9) << c.dump();
      EXPECT_LT(e["ci_high"].get<double>(), 1.0) << c.dump();
    } else {
      EXPECT_LT(e["effect"].get<double>(), 1.0) << c.dump();
    }
  }
  EXPECT_TRUE(contains(paired.out, "slow           glibc-aa")) << paired.out;
  const CommandResult unknown = hsbench({"report", dir / "raw.json", "--pair", "nope:glibc"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_TRUE(contains(unknown.err, "names 'nope', which is not an allocator of this run"))
      << unknown.err;
  const CommandResult malformed = hsbench({"report", dir / "raw.json", "--pair", "slow"});
  EXPECT_NE(malformed.exit_code, 0);
  EXPECT_TRUE(contains(malformed.err, "CANDIDATE:REFERENCE")) << malformed.err;

  const auto raw = read_json(dir / "raw.json");
  std::map<int, double> base, aa;
  for (const auto& s : raw["samples"]) {
    ASSERT_EQ(s["status"], "ok") << s.dump();
    if (s["threads"] != 1) continue;
    if (s["allocator"] == "glibc") base[s["block"]] = s["measurement"]["ops_per_sec"];
    if (s["allocator"] == "glibc-aa") aa[s["block"]] = s["measurement"]["ops_per_sec"];
  }
  std::vector<double> b, c;
  for (const auto& [block, v] : base) {
    b.push_back(v);
    c.push_back(aa.at(block));
  }
  stats::BootstrapConfig config;
  config.seed = 11;
  config.confidence = 0.99;
  const auto e = stats::paired_effect(c, b, stats::Direction::kHigherIsBetter, config);
  ASSERT_TRUE(e.ci_valid);
  EXPECT_LE(e.ci_low, 1.0) << e.effect;
  EXPECT_GE(e.ci_high, 1.0) << e.effect;
}

}  // namespace
}  // namespace heapscope::harness::testing
