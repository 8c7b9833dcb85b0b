#include "site/testing/fixture_campaign.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "stats/bootstrap_seed.h"
#include "stats/paired_effect.h"
#include "stats/quantile.h"

namespace heapscope::site::testing {
namespace {

using Json = nlohmann::ordered_json;

const std::vector<std::string> kAllocators = {"mimalloc", "engine", "engine-noprof", "jemalloc",
                                              "tcmalloc", "glibc",  "engine-prof",   "user-a"};
const std::vector<std::string> kWorkloads = {
    "tiny-hot",      "general-mix", "cross-thread", "large-buffers", "producer-consumer",
    "realloc-chain", "calloc-mix",  "aligned-mix",  "thread-churn",  "sawtooth"};

// A small LCG: the fixture must not depend on the standard library's distributions.
struct Noise {
  std::uint64_t x;
  double next() {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return 0.9 + 0.2 * static_cast<double>(x >> 11) * 0x1.0p-53;
  }
};

std::string library_of(const std::string& id) {
  if (id.rfind("engine", 0) == 0) return "/build/engine/libheapscope.so";
  if (id == "glibc") return "/usr/lib/x86_64-linux-gnu/libc.so.6";
  return "/usr/lib/x86_64-linux-gnu/lib" + id + ".so.2";
}

Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(); }

const std::vector<double> kReturnPoints = {0.1, 1.0, 5.0};

// What the memory and latency protocols add to the sample of the allocator at `index`: a
// replay whose RssAnon ramps up to a peak that grows with the index, then keeps a share of it
// after the drain that falls at each return point (odd indexes keep more), and latency
// percentiles that grow with the index. `jitter` is in [0.9, 1.1).
void add_protocols(Json& sample, std::size_t index, double jitter) {
  const double a = static_cast<double>(index);
  const std::uint64_t baseline = 600 * 1024;
  const double above = 4.0 * 1048576 * (1 + 0.3 * a) * jitter;
  const double replay_seconds = 0.2 * (1 + 0.1 * a) * jitter;
  const double kept = index % 2 == 1 ? 0.8 : 0.25;
  Json seconds = Json::array(), bytes = Json::array();
  constexpr int kPoints = 40;
  std::uint64_t peak = baseline;
  for (int i = 0; i <= kPoints; ++i) {
    const double share = static_cast<double>(i) / kPoints;
    const double level = i == kPoints ? kept : std::sin(share * 2.6);
    const auto b = baseline + static_cast<std::uint64_t>(above * std::clamp(level, 0.0, 1.0));
    peak = std::max(peak, b);
    seconds.push_back(std::round(share * replay_seconds * 1e6) / 1e6);
    bytes.push_back(b);
  }
  Json returns = Json::array();
  double held = kept;
  for (const double after : kReturnPoints) {
    held *= index % 2 == 1 ? 0.95 : 0.5;
    returns.push_back({{"after_seconds", after},
                       {"at_seconds", after + 0.0004},
                       {"anon_bytes", baseline + static_cast<std::uint64_t>(above * held)}});
  }
  sample["measurement"]["peak_live_bytes"] = static_cast<std::uint64_t>(3.0 * 1048576);
  sample["measurement"]["latency"] = {
      {"method", "open-loop-intended-start-v1"},
      {"rate_ops_per_sec", 5e6},
      {"count", 1000000},
      {"p50_ns", static_cast<std::uint64_t>(180 * (1 + 0.1 * a) * jitter)},
      {"p99_ns", static_cast<std::uint64_t>(1500 * (1 + 0.2 * a) * jitter)},
      {"p999_ns", static_cast<std::uint64_t>(12000 * (1 + 0.4 * a) * jitter)},
      {"max_ns", static_cast<std::uint64_t>(900000 * jitter)}};
  sample["memory"] = {{"method", "proc-status-rssanon-v1"},
                      {"interval_seconds", 0.002},
                      {"samples", 120},
                      {"baseline_anon_bytes", baseline},
                      {"peak_anon_bytes", peak},
                      {"peak_above_baseline_bytes", peak - baseline},
                      {"drained_anon_bytes", bytes.back()},
                      {"drained_at_seconds", seconds.back()},
                      {"timeline", {{"stride", 1}, {"seconds", seconds}, {"anon_bytes", bytes}}},
                      {"return_points", returns},
                      {"sampling_seconds", 0.001},
                      {"complete", true}};
}

// One allocator's ok samples in one cell, by block.
struct Series {
  std::map<std::uint64_t, double> rate_by_block;
  std::vector<double> rss;
  std::size_t failed = 0;
};

Json effect_of(const Series& cand, const Series& base, std::uint64_t seed, const std::string& key) {
  std::vector<double> c, b;
  for (const auto& [block, rate] : cand.rate_by_block) {
    if (auto it = base.rate_by_block.find(block); it != base.rate_by_block.end()) {
      c.push_back(rate);
      b.push_back(it->second);
    }
  }
  stats::BootstrapConfig config;
  config.seed = stats::bootstrap_seed(seed, key);
  config.resamples = 200;  // enough for a shape; the figures are not under test here
  const stats::PairedEffect e =
      stats::paired_effect(c, b, stats::Direction::kHigherIsBetter, config);
  return {{"paired_blocks", e.blocks},
          {"effect", number_or_null(e.effect)},
          {"ci_low", number_or_null(e.ci_low)},
          {"ci_high", number_or_null(e.ci_high)},
          {"ci_valid", e.ci_valid},
          {"bootstrap_seed", e.seed}};
}

}  // namespace

Json fixture_summary(const Json& raw) {
  const auto seed = raw["seed"].get<std::uint64_t>();
  const std::string baseline = raw["baseline"].get<std::string>();
  std::vector<std::string> order{baseline};
  for (const Json& a : raw["active_allocators"]) {
    if (a != baseline) order.push_back(a.get<std::string>());
  }
  using CellKey = std::pair<std::string, unsigned>;
  std::vector<CellKey> cells;
  std::map<CellKey, std::map<std::string, Series>> series;
  std::map<CellKey, bool> oversubscribed;
  Json failures = Json::array();
  std::size_t ok = 0;
  for (const Json& s : raw["samples"]) {
    const CellKey key{s["workload"].get<std::string>(), s["threads"].get<unsigned>()};
    if (!series.contains(key)) cells.push_back(key);
    Series& one = series[key][s["allocator"].get<std::string>()];
    if (s["status"] == "ok") {
      const Json& m = s["measurement"];
      one.rate_by_block[s["block"].get<std::uint64_t>()] = m["ops_per_sec"].get<double>();
      one.rss.push_back(m["peak_rss_bytes"].get<double>());
      oversubscribed[key] = m["oversubscribed"].get<bool>();
      ++ok;
    } else {
      ++one.failed;
      failures.push_back(
          {{"id", s["id"]}, {"kind", s["failure"]["kind"]}, {"reason", s["failure"]["reason"]}});
    }
  }
  Json cells_json = Json::array();
  for (const CellKey& key : cells) {
    Json rows = Json::array();
    for (const std::string& id : order) {
      const Series& one = series[key][id];
      std::vector<double> rates;
      for (const auto& [block, rate] : one.rate_by_block) rates.push_back(rate);
      const stats::Summary q = stats::summarize(rates);
      const std::string effect_key =
          key.first + "/" + std::to_string(key.second) + "/ops_per_sec/" + id + "/" + baseline;
      rows.push_back(
          {{"allocator", id},
           {"n", rates.size()},
           {"failed", one.failed},
           {"ops_per_sec",
            {{"median", number_or_null(q.median)},
             {"q1", number_or_null(q.q1)},
             {"q3", number_or_null(q.q3)},
             {"iqr", number_or_null(q.iqr)},
             {"min", number_or_null(q.min)},
             {"max", number_or_null(q.max)},
             {"relative_iqr", number_or_null(q.relative_iqr)}}},
           {"peak_rss_bytes", {{"median", number_or_null(stats::median(one.rss))}}},
           {"effect_vs_baseline",
            id == baseline ? Json() : effect_of(one, series[key][baseline], seed, effect_key)}});
    }
    cells_json.push_back({{"workload", key.first},
                          {"threads", key.second},
                          {"oversubscribed", oversubscribed[key]},
                          {"allocators", rows},
                          {"digest_mismatches", Json::array()}});
  }
  return {{"schema", "heapscope.campaign-summary"},
          {"schema_version", 1},
          {"campaign", raw["campaign"]["name"]},
          {"seed", seed},
          {"baseline", baseline},
          {"metric", "ops_per_sec"},
          {"direction", "higher-is-better"},
          {"effect_method", stats::kPairedEffectMethod},
          {"resamples", 200},
          {"confidence", 0.95},
          {"complete", raw["complete"]},
          {"hosts", raw["hosts"]},
          {"samples", {{"total", raw["samples"].size()}, {"ok", ok}, {"failed", failures.size()}}},
          {"cells", cells_json},
          {"failures", failures},
          {"unavailable_allocators", Json::array()}};
}

Json fixture_raw_run(const FixtureSpec& spec) {
  std::vector<std::string> allocators(kAllocators.begin(),
                                      kAllocators.begin() + static_cast<long>(spec.allocators));
  std::vector<std::string> workloads;
  for (std::size_t w = 0; w < spec.workloads; ++w) {
    workloads.push_back(spec.application
                            ? "app:fixture-" + std::to_string(w)
                            : kWorkloads[w % kWorkloads.size()] +
                                  (w >= kWorkloads.size() ? "-" + std::to_string(w) : ""));
  }
  char seed_hex[32];
  std::snprintf(seed_hex, sizeof seed_hex, "0x%016llx", static_cast<unsigned long long>(spec.seed));
  Json raw{{"schema", "heapscope.raw-run"},
           {"schema_version", 1},
           {"tool", {{"name", "hsbench"}, {"engine_version", spec.engine_version}}},
           {"created", spec.created},
           {"complete", true},
           {"campaign",
            {{"name", spec.campaign},
             {"workloads", workloads},
             {"threads", spec.threads},
             {"blocks", spec.blocks},
             {"target_seconds", {0.1, 0.3}},
             {"ops", nullptr},
             {"timeout_seconds", 60.0},
             {"verify", false}}},
           {"seed", spec.seed},
           {"seed_hex", seed_hex},
           {"baseline", allocators.front()},
           {"active_allocators", allocators},
           {"workload_program", "/build/workloads/hs-workload"},
           {"block_order_method", "shuffled-latin-square-v1"},
           {"hosts",
            {{{"hostname", "fixture-host"},
              {"sysname", "Linux"},
              {"release", "6.1.0"},
              {"version", "#1 SMP"},
              {"machine", "x86_64"},
              {"cpu_model", "Fixture CPU @ 3.0GHz"},
              {"nproc", spec.host_cpus},
              {"mem_total_kb", 16u * 1024 * 1024}}}},
           {"allocators", Json::array()},
           {"calibration", Json::array()},
           {"orders", Json::array()},
           {"samples", Json::array()}};
  if (spec.protocols && !spec.application) {
    raw["schema_version"] = 4;
    raw["campaign"]["memory"] = true;
    raw["campaign"]["return_points_seconds"] = kReturnPoints;
    raw["campaign"]["latency"] = true;
    if (allocators.size() >= 3) {
      raw["campaign"]["pairs"] = Json::array({Json::array({allocators[1], allocators[2]})});
    }
  }
  if (spec.application) {
    raw["application"] = {
        {"argv", {"/usr/bin/fixture-app", "--size", "3"}}, {"cwd", "/tmp"}, {"same_output", true}};
  }
  for (std::size_t a = 0; a < allocators.size(); ++a) {
    const std::string& id = allocators[a];
    const bool ours = id.rfind("engine", 0) == 0;
    raw["allocators"].push_back({{"id", id},
                                 {"description", id + " (fixture)"},
                                 {"library", library_of(id)},
                                 {"resolved_path", library_of(id)},
                                 {"ld_preload", id == "glibc" ? Json() : Json(library_of(id))},
                                 {"env", Json::object()},
                                 {"package", ours ? "heapscope" : "lib" + id},
                                 {"version", ours ? spec.engine_version : "2.0.9-1"},
                                 {"sha256", std::string(63, 'a') + static_cast<char>('0' + a)},
                                 {"available", true}});
  }
  Noise noise{spec.seed};
  for (const std::string& w : workloads) {
    for (unsigned t : spec.threads) {
      raw["calibration"].push_back({{"workload", w},
                                    {"threads", t},
                                    {"allocator", allocators.front()},
                                    {"status", "ok"},
                                    {"ops", 1000000},
                                    {"attempts", Json::array()}});
      for (std::size_t b = 0; b < spec.blocks; ++b) {
        raw["orders"].push_back(
            {{"workload", w}, {"threads", t}, {"block", b}, {"order", allocators}});
        for (std::size_t a = 0; a < allocators.size(); ++a) {
          const std::string& id = allocators[a];
          const double speed = (1 + 0.08 * static_cast<double>(a)) * noise.next();
          const std::string sample_id =
              w + "/t" + std::to_string(t) + "/b" + std::to_string(b) + "/" + id;
          Json measurement;
          if (spec.application) {
            const double wall = 2.0 / speed;
            measurement = {{"wall_seconds", wall},
                           {"user_seconds", wall * 0.9},
                           {"system_seconds", wall * 0.05},
                           {"peak_rss_bytes", 50000000 + 1000000 * a},
                           {"exit_status", 0},
                           {"stdout_sha256", std::string(64, 'c')}};
          } else {
            const double rate = 1e7 * speed * (t > spec.host_cpus ? 1.2 : static_cast<double>(t));
            measurement = {
                {"schema", "heapscope.workload-run.v1"},
                {"workload", w},
                {"threads", t},
                {"ops", 1000000},
                {"seconds", 1e6 / rate},
                {"ops_per_sec", rate},
                {"peak_rss_bytes", 8000000 + 150000 * a + 1000 * t},
                {"stream_digest", "0123456789abcdef"},
                {"seeds",
                 {{"campaign", spec.seed}, {"block", b}, {"workers", {"99bfe7fcb9ddb0bd"}}}},
                {"calls", {{"malloc", 500000}, {"free", 500000}, {"total", 1000000}}},
                {"allocator",
                 {{"id", id}, {"malloc_object", library_of(id)}, {"consistent", true}}},
                {"cpus_online", spec.host_cpus},
                {"oversubscribed", t > spec.host_cpus}};
          }
          Json argv = spec.application ? Json{"/usr/bin/fixture-app", "--size", "3"}
                                       : Json{"/build/workloads/hs-workload",
                                              "--workload",
                                              w,
                                              "--threads",
                                              std::to_string(t),
                                              "--ops",
                                              "1000000",
                                              "--seed",
                                              std::to_string(spec.seed),
                                              "--block",
                                              std::to_string(b),
                                              "--expect-allocator",
                                              library_of(id)};
          Json sample{{"id", sample_id},
                      {"workload", w},
                      {"threads", t},
                      {"block", b},
                      {"position", a},
                      {"allocator", id},
                      {"argv", argv},
                      {"env", {"PATH=/usr/bin:/bin", "LD_PRELOAD=" + library_of(id)}},
                      {"seeds", {{"campaign", spec.seed}, {"block", b}}},
                      {"host", "fixture-host"},
                      {"wall_seconds", 0.3},
                      {"status", "ok"},
                      {"measurement", measurement}};
          if (spec.protocols && !spec.application) add_protocols(sample, a, noise.next());
          raw["samples"].push_back(std::move(sample));
        }
      }
    }
  }
  return raw;
}

}  // namespace heapscope::site::testing
