// The memory protocol end to end (harness/docs/protocol.md#memory): the parent's RssAnon
// readings of hs-workload under allocators whose memory behaviour is known
// (tests/memory_shim.c), the stream's exclusion, the return points, and the paired effects.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "campaign_test_util.h"
#include "harness/campaign/sample_runner.h"

namespace heapscope::harness::testing {
namespace {

constexpr double kMiB = 1048576.0;

SampleOutcome run_memory_sample(const std::string& workload, std::uint64_t ops,
                                const std::string& preload, const std::string& expect,
                                const std::vector<double>& return_points) {
  std::vector<std::string> env{"PATH=/usr/bin:/bin"};
  if (!preload.empty()) env.push_back("LD_PRELOAD=" + preload);
  return run_sample({HS_WORKLOAD_EXE, "--workload", workload, "--ops", std::to_string(ops),
                     "--seed", "7", "--expect-allocator", expect, "--memory-fd", "3"},
                    env, 60, return_points);
}

double above_baseline(const nlohmann::ordered_json& memory, double anon) {
  return anon - memory["baseline_anon_bytes"].get<double>();
}

// The footprint shim maps and touches exactly 64 MiB during the replay: the measured peak above
// the pre-replay baseline must be 64 MiB, give or take the small requests glibc still serves
// and the worker's stack.
TEST(Memory, KnownFootprintMeasuredWithinTolerance) {
  const SampleOutcome o =
      run_memory_sample("large-buffers", 2000, HS_FOOTPRINT_SHIM, HS_FOOTPRINT_SHIM, {0.1});
  ASSERT_TRUE(o.ok) << o.kind << ": " << o.reason << "\n" << o.stderr_tail;
  const auto& m = o.memory;
  std::printf(
      "footprint shim: baseline %.3f MiB, peak %.3f MiB, above baseline %.3f MiB, %llu "
      "samples\n",
      m["baseline_anon_bytes"].get<double>() / kMiB, m["peak_anon_bytes"].get<double>() / kMiB,
      m["peak_above_baseline_bytes"].get<double>() / kMiB,
      static_cast<unsigned long long>(m["samples"].get<std::uint64_t>()));
  const double above = m["peak_above_baseline_bytes"].get<double>();
  EXPECT_GE(above, 64 * kMiB);
  EXPECT_LE(above, 64.5 * kMiB);
  // The arena is never freed: still there after the drain.
  EXPECT_GE(above_baseline(m, m["return_points"][0]["anon_bytes"].get<double>()), 64 * kMiB);

  // The timeline (harness/campaign/rss_timeline.h) starts at the pre-replay reading, ends at
  // the drain, and keeps the peak exactly: each point is the largest of its readings.
  const auto& t = m["timeline"];
  ASSERT_GE(t["seconds"].size(), 2u);
  ASSERT_EQ(t["seconds"].size(), t["anon_bytes"].size());
  EXPECT_LE(t["seconds"].size(), 64u + 3u);
  EXPECT_EQ(t["seconds"][0], 0.0);
  EXPECT_EQ(t["anon_bytes"][0], m["baseline_anon_bytes"]);
  EXPECT_EQ(t["anon_bytes"].back(), m["drained_anon_bytes"]);
  EXPECT_NEAR(t["seconds"].back().get<double>(), m["drained_at_seconds"].get<double>(), 1e-6);
  std::uint64_t top = 0;
  double last = -1;
  for (std::size_t i = 0; i < t["seconds"].size(); ++i) {
    EXPECT_GT(t["seconds"][i].get<double>(), last) << "times ascend";
    last = t["seconds"][i].get<double>();
    top = std::max(top, t["anon_bytes"][i].get<std::uint64_t>());
  }
  EXPECT_EQ(top, m["peak_anon_bytes"].get<std::uint64_t>());
}

// The child's peak RSS is its own image's. A spawned process is a copy of its parent until it
// execs, and ru_maxrss counts that copy: spawned from this test process made 64 MiB bigger, a
// small run would report 64 MiB and more.
TEST(Memory, ChildPeakRssIsOfItsOwnImage) {
  std::vector<char> ballast(std::size_t{64} << 20, 1);  // written, so resident
  const SampleOutcome o = run_memory_sample("tiny-hot", 1000, "", HS_LIBC, {});
  ASSERT_TRUE(o.ok) << o.kind << ": " << o.reason << "\n" << o.stderr_tail;
  const double peak = o.measurement["peak_rss_bytes"].get<double>();
  EXPECT_GT(peak, 0.0);
  EXPECT_LT(peak, 32 * kMiB) << "the spawning process's RSS leaked into the child's peak";
  EXPECT_EQ(ballast[ballast.size() / 2], 1);
}

// A long tiny-hot stream (tens of MiB, materialized before the replay) must not show in the
// allocator's memory, though the child's own peak RSS includes it.
TEST(Memory, MaterializedStreamIsExcluded) {
  const SampleOutcome o = run_memory_sample("tiny-hot", 6'000'000, "", HS_LIBC, {});
  ASSERT_TRUE(o.ok) << o.kind << ": " << o.reason << "\n" << o.stderr_tail;
  const double stream = o.measurement["stream_bytes"].get<double>();
  const double above = o.memory["peak_above_baseline_bytes"].get<double>();
  const double baseline = o.memory["baseline_anon_bytes"].get<double>();
  std::printf(
      "tiny-hot: stream %.1f MiB, child peak RSS %.1f MiB, RssAnon baseline %.3f MiB, "
      "peak above baseline %.3f MiB\n",
      stream / kMiB, o.measurement["peak_rss_bytes"].get<double>() / kMiB, baseline / kMiB,
      above / kMiB);
  ASSERT_GT(stream, 40 * kMiB);
  EXPECT_GT(o.measurement["peak_rss_bytes"].get<double>(), stream);  // the old measure's flaw
  EXPECT_LT(baseline + above, 8 * kMiB);
  EXPECT_GT(o.measurement["peak_live_bytes"].get<double>(), 0);
}

// Positive control of the return points: the leaky shim never gives memory back, so RSS 5 s
// after the drain is its peak; glibc gives most of its back (large blocks are unmapped or
// trimmed at free). The engine is run and printed, not judged: it purges only from inside
// allocator calls, so a process that goes idle after the drain keeps its peak (measured: all
// of it at +5 s, on large-buffers as on sawtooth and long-lived).
TEST(Memory, LeakyShimKeepsItsPeakWhileGlibcReturnsMemory) {
  const std::vector<double> points{0.1, 1, 5};
  struct Case {
    const char* name;
    std::string preload, expect;
    bool leaky;
    std::uint64_t ops;  // the leaky shim keeps every buffer: fewer of them
    bool judged = true;
  };
  std::vector<Case> cases{{"leaky", HS_LEAKY_SHIM, HS_LEAKY_SHIM, true, 200},
                          {"glibc", "", HS_LIBC, false, 400}};
  const std::string engine = HS_ENGINE_LIB;
  ASSERT_TRUE(std::filesystem::exists(engine)) << engine << " is not built";
  cases.push_back({"engine", engine, engine, false, 400, false});
  for (const Case& c : cases) {
    const SampleOutcome o = run_memory_sample("large-buffers", c.ops, c.preload, c.expect, points);
    ASSERT_TRUE(o.ok) << c.name << ": " << o.kind << ": " << o.reason << "\n" << o.stderr_tail;
    const auto& m = o.memory;
    const double peak = m["peak_above_baseline_bytes"].get<double>();
    const double last = above_baseline(m, m["return_points"][2]["anon_bytes"].get<double>());
    std::printf(
        "%-7s peak %.2f MiB above baseline; at +0.1 s %.2f, +1 s %.2f, +5 s %.2f MiB\n", c.name,
        peak / kMiB, above_baseline(m, m["return_points"][0]["anon_bytes"].get<double>()) / kMiB,
        above_baseline(m, m["return_points"][1]["anon_bytes"].get<double>()) / kMiB, last / kMiB);
    ASSERT_EQ(m["return_points"].size(), 3u);
    EXPECT_GE(m["return_points"][2]["at_seconds"].get<double>(), 5.0);
    EXPECT_GT(peak, 4 * kMiB) << c.name;
    if (!c.judged) continue;
    // glibc keeps about half (the stream's live set; its peak is a transient the 2 ms sampler
    // may catch only in part: a run on a loaded machine read 12.6 MiB peak, 6.3 at +5 s), so
    // its bound sits well apart from the leaky shim's, not at the edge of glibc's own figure.
    if (c.leaky) {
      EXPECT_GE(last, 0.95 * peak) << c.name;
    } else {
      EXPECT_LE(last, 0.8 * peak) << c.name;
    }
  }
}

// Through hsbench run and report: glibc twice under two names, entering the child the same way
// (both preloaded: the built-in `glibc` row is not), shows no material peak effect; the
// footprint shim (64 MiB more) is flagged; the summary carries every memory field. A true A/A
// still excludes 1.0 in ~5% of runs, so the control asserts equivalence, not that the CI
// contains 1.0. It does so on long-lived, whose peak is a steady live set (its A/A reads
// [1.000, 1.000]); on large-buffers the peak is transient (the replay lasts ~15 ms), a 2 ms
// sampler catches it at a random phase, and 7 blocks give a coarse interval (A/A reads there:
// [0.899, 1.015], and 1.137 [1.015, 1.224] in a clean-clone CI run), so only its median effect
// is held, to 20%: the footprint shim's peak effect there is 0.17 [0.16, 0.22], far outside.
TEST(Memory, AaControlHasNoPeakEffectAndFootprintShimIsFlagged) {
  ScratchDir dir("memory-aa");
  const CommandResult r = hsbench({"run",
                                   "--allocators",
                                   "glibc-a,glibc-aa,footprint",
                                   "--allocator",
                                   std::string("glibc-a=") + HS_LIBC,
                                   "--allocator",
                                   std::string("glibc-aa=") + HS_LIBC,
                                   "--allocator",
                                   std::string("footprint=") + HS_FOOTPRINT_SHIM,
                                   "--workloads",
                                   "large-buffers,long-lived",
                                   "--threads",
                                   "1",
                                   "--blocks",
                                   "7",
                                   "--ops",
                                   "200",
                                   "--seed",
                                   "9",
                                   "--return-points",
                                   "0.1",
                                   "--baseline",
                                   "glibc-a",
                                   "--out",
                                   dir / "raw.json"},
                                  300000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CommandResult rep = hsbench({"report", dir / "raw.json", "--summary-out", dir / "s.json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  std::cout << rep.out;
  EXPECT_TRUE(contains(rep.out, "memory: RssAnon"));
  const auto raw = read_json(dir / "raw.json");
  EXPECT_EQ(raw["schema_version"], 4);
  const auto summary = read_json(dir / "s.json");
  const auto aa = summary_row(summary, "long-lived", 1, "glibc-aa")["memory"];
  const auto& aa_effect = aa["peak_effect_vs_baseline"];
  ASSERT_TRUE(aa_effect["ci_valid"].get<bool>()) << aa.dump();
  EXPECT_GE(aa_effect["ci_low"].get<double>(), 0.97) << aa_effect.dump();
  EXPECT_LE(aa_effect["ci_high"].get<double>(), 1.03) << aa_effect.dump();
  const auto aa_transient = summary_row(summary, "large-buffers", 1, "glibc-aa")["memory"];
  EXPECT_NEAR(aa_transient["peak_effect_vs_baseline"]["effect"].get<double>(), 1.0, 0.20)
      << aa_transient.dump();
  const auto fp = summary_row(summary, "large-buffers", 1, "footprint")["memory"];
  EXPECT_LT(fp["peak_effect_vs_baseline"]["ci_high"].get<double>(), 1.0) << fp.dump();
  EXPECT_GT(fp["fragmentation"]["median"].get<double>(), 1.0) << fp.dump();
  ASSERT_EQ(fp["return_points"].size(), 1u);
  EXPECT_FALSE(fp["return_points"][0]["effect_vs_baseline"].is_null());

  // The sample reproduces, memory included.
  const std::string id = raw["samples"][0]["id"];
  const CommandResult again = hsbench({"reproduce", dir / "raw.json", id});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_TRUE(contains(again.out, "anon peak")) << again.out;
}

// Raw runs of schema version 1 (no memory) still report and publish.
TEST(Memory, SchemaVersion1RawRunStillReportsAndPublishes) {
  ScratchDir dir("memory-v1");
  const std::string v1 = HS_REPORT_TESTDATA "/campaign.raw.json";
  ASSERT_EQ(read_json(v1)["schema_version"], 1);
  const CommandResult rep = hsbench({"report", v1});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_FALSE(contains(rep.out, "memory: RssAnon"));
  const CommandResult pub = hsbench({"publish", v1, "--out", dir / "site"});
  EXPECT_EQ(pub.exit_code, 0) << pub.err;
  const CommandResult ver = hsbench({"verify", dir / "site"});
  EXPECT_EQ(ver.exit_code, 0) << ver.err;
}

// A raw run claiming a future schema version is refused by name.
TEST(Memory, FutureSchemaVersionIsRefused) {
  ScratchDir dir("memory-v5");
  auto raw = read_json(HS_REPORT_TESTDATA "/campaign.raw.json");
  raw["schema_version"] = 5;
  std::ofstream(dir / "raw.json") << raw.dump();
  const CommandResult rep = hsbench({"report", dir / "raw.json"});
  EXPECT_NE(rep.exit_code, 0);
  EXPECT_TRUE(contains(rep.err, "schema_version 5 is not supported")) << rep.err;
}

}  // namespace
}  // namespace heapscope::harness::testing
