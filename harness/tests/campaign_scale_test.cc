// Beyond one process: plan / run-block / merge under GNU parallel; and the two measured
// speed targets: report speed on a 7 x 10 x 4 x 20 raw run, and per-sample overhead.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "harness/campaign/sample_runner.h"
#include "harness/tests/campaign_test_util.h"

namespace heapscope::harness::testing {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(CampaignScale, PlanRunBlocksWithGnuParallelAndMerge) {
  if (run_command({"parallel", "--version"}).exit_code != 0) GTEST_SKIP() << "no GNU parallel";
  ScratchDir dir("parallel");
  const CommandResult plan =
      hsbench({"plan", "quick", "--allocators", "glibc,jemalloc", "--ops", "4000", "--seed", "8",
               "--blocks", "2", "--out", dir / "jobs"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(std::count(plan.out.begin(), plan.out.end(), '\n'), 2) << plan.out;
  std::filesystem::create_directories(dir / "results");
  const CommandResult par = run_command(
      {"sh", "-c",
       "parallel --will-cite -j2 '" + std::string(HS_HSBENCH_EXE) + "' run-block {} --out '" +
           (dir / "results") + "'/{/.}.result.json ::: '" + (dir / "jobs") + "'/*.json"},
      nullptr, 120000);
  ASSERT_EQ(par.exit_code, 0) << par.err;
  std::vector<std::string> merge{"merge"};
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "results")) {
    merge.push_back(e.path().string());
  }
  merge.insert(merge.end(), {"--out", dir / "merged.json"});
  const CommandResult m = hsbench(merge);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto merged = read_json(dir / "merged.json");
  EXPECT_EQ(merged["complete"], true);
  EXPECT_EQ(merged["samples"].size(), 4u * 2 * 2 * 2);  // workloads x threads x allocators x blocks

  // Same form as `hsbench run` writes: same fields, same sample fields.
  const CommandResult run =
      hsbench({"run", "--allocators", "glibc,jemalloc", "--workloads", "tiny-hot", "--threads", "1",
               "--blocks", "1", "--ops", "4000", "--out", dir / "run.json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto direct = read_json(dir / "run.json");
  for (const auto& [key, _] : direct.items()) EXPECT_TRUE(merged.contains(key)) << key;
  for (const auto& [key, _] : direct["samples"][0].items()) {
    EXPECT_TRUE(merged["samples"][0].contains(key)) << key;
  }
  // Blocks appear in order, and every block's order was followed.
  EXPECT_EQ(merged["samples"][0]["block"], 0);
  EXPECT_EQ(merged["samples"].back()["block"], 1);

  const CommandResult rep = hsbench({"report", dir / "merged.json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_TRUE(contains(rep.out, "sawtooth t=2")) << rep.out;  // quick's last cell

  // Merging the same block twice is refused.
  const CommandResult twice = hsbench({"merge", merge[1], merge[1], "--out", dir / "twice.json"});
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_TRUE(contains(twice.err, "already in another result")) << twice.err;
}

// A raw run the size of a full headline campaign with 7 allocators, 10 workloads and
// 4 thread points at 20 blocks, with realistic sample records. Target: report < 2 s.
TEST(CampaignScale, ReportOnAFullSizeSyntheticRunIsFast) {
  ScratchDir dir("synthetic");
  const std::vector<std::string> allocators = {
      "engine", "engine-noprof", "engine-prof", "mimalloc", "jemalloc", "tcmalloc", "glibc"};
  nlohmann::ordered_json raw = {{"schema", "heapscope.raw-run"},
                                {"schema_version", 1},
                                {"complete", true},
                                {"campaign", {{"name", "synthetic"}, {"timeout_seconds", 60}}},
                                {"seed", 12345},
                                {"baseline", "mimalloc"},
                                {"hosts", nlohmann::json::array({{{"hostname", "h"}}})},
                                {"allocators", nlohmann::json::array()},
                                {"calibration", nlohmann::json::array()},
                                {"orders", nlohmann::json::array()},
                                {"samples", nlohmann::json::array()}};
  for (const auto& a : allocators) {
    raw["allocators"].push_back({{"id", a}, {"available", true}, {"sha256", std::string(64, 'a')}});
  }
  std::uint64_t x = 1;
  auto noise = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return 0.9 + 0.2 * static_cast<double>(x >> 11) * 0x1.0p-53;
  };
  for (int w = 0; w < 10; ++w) {
    for (int t : {1, 2, 4, 8}) {
      const std::string wl = "workload-" + std::to_string(w);
      raw["calibration"].push_back(
          {{"workload", wl}, {"threads", t}, {"status", "ok"}, {"ops", 1000000}});
      for (int b = 0; b < 20; ++b) {
        for (std::size_t a = 0; a < allocators.size(); ++a) {
          const double rate = 1e7 * (1 + 0.1 * static_cast<double>(a)) * noise();
          raw["samples"].push_back(
              {{"id",
                wl + "/t" + std::to_string(t) + "/b" + std::to_string(b) + "/" + allocators[a]},
               {"workload", wl},
               {"threads", t},
               {"block", b},
               {"position", a},
               {"allocator", allocators[a]},
               {"argv",
                {"/build/workloads/hs-workload", "--workload", wl, "--threads", std::to_string(t),
                 "--ops", "1000000", "--seed", "12345", "--block", std::to_string(b),
                 "--expect-allocator", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"}},
               {"env",
                {"PATH=/usr/bin:/bin", "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"}},
               {"seeds", {{"campaign", 12345}, {"block", b}}},
               {"host", "h"},
               {"status", "ok"},
               {"wall_seconds", 0.3},
               {"measurement",
                {{"schema", "heapscope.workload-run.v1"},
                 {"workload", wl},
                 {"threads", t},
                 {"ops", 1000000},
                 {"seconds", 1e6 / rate},
                 {"ops_per_sec", rate},
                 {"peak_rss_bytes", 8000000 + a},
                 {"stream_digest", "0123456789abcdef"},
                 {"seeds", {{"campaign", 12345}, {"block", b}, {"workers", {"99bfe7fcb9ddb0bd"}}}},
                 {"calls", {{"malloc", 500000}, {"free", 500000}, {"total", 1000000}}},
                 {"allocator",
                  {{"id", allocators[a]},
                   {"malloc_object", "/usr/lib/x.so"},
                   {"consistent", true}}},
                 {"cpus_online", 2},
                 {"oversubscribed", t > 2}}}});
        }
      }
    }
  }
  { std::ofstream(dir / "raw.json") << raw.dump(1); }
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = hsbench({"report", dir / "raw.json", "--summary-out", dir / "s.json"});
  const double elapsed = seconds_since(start);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::printf("hsbench report on 7 x 10 x 4 x 20 (%zu samples, %.1f MB): %.3f s\n",
              raw["samples"].size(), static_cast<double>(read_file(dir / "raw.json").size()) / 1e6,
              elapsed);
  const auto summary = read_json(dir / "s.json");
  EXPECT_EQ(summary["cells"].size(), 40u);
  EXPECT_EQ(summary["cells"][0]["allocators"].size(), 7u);
  EXPECT_LT(elapsed, 4.0);  // target 2 s; slack for a loaded 2-core test machine
}

// Spawn + allocator probe + JSON collection for a child that does almost no work.
// Target: < 20 ms per sample.
TEST(CampaignScale, HarnessOverheadPerSample) {
  std::vector<double> walls;
  for (int i = 0; i < 15; ++i) {
    const SampleOutcome o = run_sample(
        {HS_WORKLOAD_EXE, "--workload", "tiny-hot", "--ops", "1000", "--expect-allocator", HS_LIBC},
        {"PATH=/usr/bin:/bin"}, 10);
    ASSERT_TRUE(o.ok) << o.kind << ": " << o.reason;
    walls.push_back(o.wall_seconds);
  }
  std::sort(walls.begin(), walls.end());
  std::printf("per-sample overhead (glibc, --ops 1000): median %.2f ms, min %.2f ms, max %.2f ms\n",
              walls[walls.size() / 2] * 1e3, walls.front() * 1e3, walls.back() * 1e3);
  EXPECT_LT(walls[walls.size() / 2], 0.050);  // target 0.020; slack for a loaded machine
}

// What the memory protocol adds per sample (socket, handshakes, /proc reads every 2 ms; no
// return points): the same tiny child with and without --memory-fd, interleaved.
// Target: < 20 ms more per sample.
TEST(CampaignScale, MemoryProtocolOverheadPerSample) {
  std::vector<double> plain, memory, reading;
  const std::vector<std::string> argv{HS_WORKLOAD_EXE, "--workload",         "tiny-hot", "--ops",
                                      "1000",          "--expect-allocator", HS_LIBC};
  std::vector<std::string> with_memory = argv;
  with_memory.insert(with_memory.end(), {"--memory-fd", "3"});
  for (int i = 0; i < 15; ++i) {
    const SampleOutcome a = run_sample(argv, {"PATH=/usr/bin:/bin"}, 10);
    const SampleOutcome b = run_sample(with_memory, {"PATH=/usr/bin:/bin"}, 10);
    ASSERT_TRUE(a.ok && b.ok) << a.reason << b.reason;
    ASSERT_TRUE(b.memory.value("complete", false)) << b.memory.dump();
    plain.push_back(a.wall_seconds);
    memory.push_back(b.wall_seconds);
    reading.push_back(b.memory["sampling_seconds"].get<double>());
  }
  for (auto* v : {&plain, &memory, &reading}) std::sort(v->begin(), v->end());
  const double extra = memory[memory.size() / 2] - plain[plain.size() / 2];
  std::printf(
      "memory protocol: median wall %.2f ms with, %.2f ms without (+%.2f ms); /proc reads "
      "%.3f ms per sample\n",
      memory[memory.size() / 2] * 1e3, plain[plain.size() / 2] * 1e3, extra * 1e3,
      reading[reading.size() / 2] * 1e3);
  EXPECT_LT(extra, 0.020);
}

}  // namespace
}  // namespace heapscope::harness::testing
