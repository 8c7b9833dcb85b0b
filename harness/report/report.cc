#include "harness/report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "harness/report/app_report.h"
#include "harness/report/suite_report.h"
#include "harness/report/summary_model.h"
#include "stats/quantile.h"

namespace heapscope::harness {
namespace {

// What the memory protocol recorded for one sample (harness/docs/protocol.md#memory).
struct Memory {
  bool present = false;
  double baseline = 0, peak = 0;                   // RssAnon bytes: before the replay, its maximum
  double live = 0;                                 // the workload's peak live requested bytes
  std::vector<std::pair<double, double>> returns;  // (seconds after the drain, RssAnon bytes)
  // RSS over the replay (raw-run version 4): seconds since the replay began, RssAnon bytes.
  std::vector<double> timeline_seconds, timeline_bytes;
  double drained_at = 0;
};

// What the open-loop latency protocol recorded for one sample (harness/docs/protocol.md#latency):
// nanoseconds from intended start to completion, over every timed op of the sample.
struct Latency {
  bool present = false;
  double p50 = 0, p99 = 0, p999 = 0, max = 0;
  double count = 0, rate = 0;  // ops timed; the schedule's rate (stream ops/s, whole cell)
};

struct Point {
  std::uint64_t block;
  double rate;
  double rss;
  std::string digest;
  Memory memory;
  Latency latency;
};

Latency latency_of(const Json& measurement) {
  Latency l;
  const auto it = measurement.find("latency");
  if (it == measurement.end() || !it->is_object() || it->value("count", 0.0) <= 0) return l;
  l.present = true;
  l.p50 = it->value("p50_ns", 0.0);
  l.p99 = it->value("p99_ns", 0.0);
  l.p999 = it->value("p999_ns", 0.0);
  l.max = it->value("max_ns", 0.0);
  l.count = it->value("count", 0.0);
  l.rate = it->value("rate_ops_per_sec", 0.0);
  return l;
}

Memory memory_of(const Json& sample) {
  Memory m;
  if (!sample.contains("memory") || !sample.at("memory").value("complete", false)) return m;
  const Json& j = sample.at("memory");
  m.present = true;
  m.baseline = j.at("baseline_anon_bytes").get<double>();
  m.peak = j.at("peak_anon_bytes").get<double>();
  m.live = sample.at("measurement").value("peak_live_bytes", 0.0);
  for (const Json& p : j.at("return_points"))
    m.returns.emplace_back(p.at("after_seconds").get<double>(), p.at("anon_bytes").get<double>());
  if (const auto t = j.find("timeline"); t != j.end()) {
    m.timeline_seconds = t->at("seconds").get<std::vector<double>>();
    m.timeline_bytes = t->at("anon_bytes").get<std::vector<double>>();
    m.timeline_seconds.resize(std::min(m.timeline_seconds.size(), m.timeline_bytes.size()));
    m.timeline_bytes.resize(m.timeline_seconds.size());
    m.drained_at = j.value("drained_at_seconds", 0.0);
  }
  return m;
}

struct Cell {
  std::string workload;
  unsigned threads = 0;
  std::map<std::string, std::vector<Point>> ok;  // allocator -> successful samples
  std::map<std::string, std::size_t> failed;
  bool oversubscribed = false;  // threads > online CPUs, as the child saw it
};

std::vector<BlockValue> rates_of(const Cell& cell, const std::string& id) {
  std::vector<BlockValue> out;
  if (auto it = cell.ok.find(id); it != cell.ok.end()) {
    for (const Point& p : it->second) out.push_back({p.block, p.rate});
  }
  return out;
}

// One memory value of every sample of `id` that has it, by block; `pick` returns NaN to skip.
template <class Pick>
std::vector<BlockValue> memory_values(const Cell& cell, const std::string& id, Pick pick) {
  std::vector<BlockValue> out;
  if (auto it = cell.ok.find(id); it != cell.ok.end()) {
    for (const Point& p : it->second) {
      if (!p.memory.present) continue;
      const double v = pick(p.memory);
      if (std::isfinite(v)) out.push_back({p.block, v});
    }
  }
  return out;
}

std::vector<double> values_only(const std::vector<BlockValue>& v) {
  std::vector<double> out;
  for (const BlockValue& b : v) out.push_back(b.value);
  return out;
}

double return_point_value(const Memory& m, double after) {
  for (const auto& [a, v] : m.returns) {
    if (a == after) return v;
  }
  return std::nan("");
}

// The RSS curve of the sample whose peak is the median of `id`'s samples in the cell (the lower
// median for an even count, ties to the earlier block), or null when no sample has a timeline.
// One real curve rather than an average of curves, whose times would not line up.
Json representative_timeline(const Cell& cell, const std::string& id) {
  const auto it = cell.ok.find(id);
  if (it == cell.ok.end()) return Json();
  std::vector<const Point*> with;
  for (const Point& p : it->second) {
    if (p.memory.present && !p.memory.timeline_seconds.empty()) with.push_back(&p);
  }
  if (with.empty()) return Json();
  std::stable_sort(with.begin(), with.end(), [](const Point* a, const Point* b) {
    return a->memory.peak < b->memory.peak ||
           (a->memory.peak == b->memory.peak && a->block < b->block);
  });
  const Point& p = *with[(with.size() - 1) / 2];
  Json returns = Json::array();
  for (const auto& [after, bytes] : p.memory.returns)
    returns.push_back({{"after_seconds", after}, {"anon_bytes", bytes}});
  return {{"block", p.block},
          {"peak_anon_bytes", p.memory.peak},
          {"drained_at_seconds", p.memory.drained_at},
          {"seconds", p.memory.timeline_seconds},
          {"anon_bytes", p.memory.timeline_bytes},
          {"return_points", returns}};
}

// The memory block of a summary row, or null when no sample of `id` has memory. Effects are
// lower-is-better on raw RssAnon bytes (always > 0), so > 1 means less memory than the baseline.
Json memory_json(const Cell& cell, const std::string& id, const std::string& base,
                 std::uint64_t seed) {
  const auto peak = memory_values(cell, id, [](const Memory& m) { return m.peak; });
  if (peak.empty()) return Json();
  const std::string key = cell.workload + "/" + std::to_string(cell.threads) + "/";
  const bool is_base = id == base;
  auto effect = [&](const std::vector<BlockValue>& c, const std::vector<BlockValue>& b,
                    const std::string& metric) {
    return is_base ? Json()
                   : block_paired_effect(c, b, stats::Direction::kLowerIsBetter, seed,
                                         key + metric + "/" + id + "/" + base);
  };
  const auto base_peak = memory_values(cell, base, [](const Memory& m) { return m.peak; });
  const auto baseline = memory_values(cell, id, [](const Memory& m) { return m.baseline; });
  const auto above =
      memory_values(cell, id, [](const Memory& m) { return std::max(0.0, m.peak - m.baseline); });
  const auto live = memory_values(cell, id, [](const Memory& m) { return m.live; });
  const auto frag = memory_values(cell, id, [](const Memory& m) {
    return m.live > 0 ? std::max(0.0, m.peak - m.baseline) / m.live : std::nan("");
  });
  Json returns = Json::array();
  std::set<double> afters;
  if (auto it = cell.ok.find(id); it != cell.ok.end()) {
    for (const Point& p : it->second) {
      for (const auto& [a, _] : p.memory.returns) afters.insert(a);
    }
  }
  for (const double a : afters) {
    auto at = [a](const Memory& m) { return return_point_value(m, a); };
    const auto mine = memory_values(cell, id, at);
    auto above_at = [a](const Memory& m) {
      return std::max(0.0, return_point_value(m, a) - m.baseline);
    };
    char name[32];
    std::snprintf(name, sizeof name, "return_%g", a);
    returns.push_back(
        {{"after_seconds", a},
         {"anon_bytes", {{"median", number_or_null(stats::median(values_only(mine)))}}},
         {"above_baseline_bytes",
          {{"median",
            number_or_null(stats::median(values_only(memory_values(cell, id, above_at))))}}},
         {"effect_vs_baseline", effect(mine, memory_values(cell, base, at), name)}});
  }
  Json out{
      {"samples", peak.size()},
      {"baseline_anon_bytes", {{"median", number_or_null(stats::median(values_only(baseline)))}}},
      {"peak_anon_bytes", summary_to_json(stats::summarize(values_only(peak)))},
      {"peak_above_baseline_bytes", summary_to_json(stats::summarize(values_only(above)))},
      {"peak_live_bytes", {{"median", number_or_null(stats::median(values_only(live)))}}},
      {"fragmentation", summary_to_json(stats::summarize(values_only(frag)))},
      {"peak_effect_vs_baseline", effect(peak, base_peak, "peak_anon_bytes")},
      {"return_points", returns}};
  if (Json timeline = representative_timeline(cell, id); !timeline.is_null())
    out["timeline"] = std::move(timeline);
  return out;
}

// One latency value of every sample of `id` that has latency, by block.
template <class Pick>
std::vector<BlockValue> latency_values(const Cell& cell, const std::string& id, Pick pick) {
  std::vector<BlockValue> out;
  if (auto it = cell.ok.find(id); it != cell.ok.end()) {
    for (const Point& p : it->second) {
      if (p.latency.present) out.push_back({p.block, pick(p.latency)});
    }
  }
  return out;
}

// The latency block of a summary row, or null when no sample of `id` has latency. The unit of
// the bootstrap is the per-sample quantile itself: for p99.9 the paired effect pairs each block's
// candidate p99.9 with the baseline's, so the interval is about the statistic reported.
// Lower is better: effect = baseline / candidate, > 1 = lower latency than the baseline.
Json latency_json(const Cell& cell, const std::string& id, const std::string& base,
                  std::uint64_t seed) {
  const auto count = latency_values(cell, id, [](const Latency& l) { return l.count; });
  if (count.empty()) return Json();
  const std::string key = cell.workload + "/" + std::to_string(cell.threads) + "/";
  Json j{{"samples", count.size()},
         {"rate_ops_per_sec",
          {{"median", number_or_null(stats::median(values_only(
                          latency_values(cell, id, [](const Latency& l) { return l.rate; }))))}}},
         {"count", {{"median", number_or_null(stats::median(values_only(count)))}}}};
  const std::pair<const char*, double Latency::*> metrics[] = {
      {"p50", &Latency::p50}, {"p99", &Latency::p99}, {"p999", &Latency::p999}};
  for (const auto& metric : metrics) {
    const std::string name = metric.first;
    const auto member = metric.second;
    auto pick = [member](const Latency& l) {
      // A quantile of 0 ns (clock resolution) would make the log ratio undefined.
      return std::max(1.0, l.*member);
    };
    const auto mine = latency_values(cell, id, pick);
    j[name + "_ns"] = summary_to_json(stats::summarize(values_only(mine)));
    j[name + "_effect_vs_baseline"] =
        id == base ? Json()
                   : block_paired_effect(mine, latency_values(cell, base, pick),
                                         stats::Direction::kLowerIsBetter, seed,
                                         key + "latency_" + name + "_ns/" + id + "/" + base);
  }
  j["max_ns"] = summary_to_json(stats::summarize(
      values_only(latency_values(cell, id, [](const Latency& l) { return l.max; }))));
  return j;
}

Json effect_json(const Cell& cell, const std::string& cand, const std::string& base,
                 std::uint64_t seed) {
  const std::string key =
      cell.workload + "/" + std::to_string(cell.threads) + "/ops_per_sec/" + cand + "/" + base;
  return block_paired_effect(rates_of(cell, cand), rates_of(cell, base),
                             stats::Direction::kHigherIsBetter, seed, key);
}

// The memory table, when any row has memory: per row the baseline RssAnon before the replay,
// the peak (raw and above the baseline), the peak live requested bytes, the fragmentation proxy,
// the paired peak effect and each return point (RssAnon, its effect).
void print_memory_table(std::ostream& out, const Json& summary) {
  std::set<double> afters;
  bool any = false;
  for (const Json& cell : summary.at("cells")) {
    for (const Json& row : cell.at("allocators")) {
      if (!row.contains("memory")) continue;
      any = true;
      for (const Json& r : row.at("memory").at("return_points"))
        afters.insert(r.at("after_seconds").get<double>());
    }
  }
  if (!any) return;
  const std::string baseline = summary.at("baseline").get<std::string>();
  std::string head;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-24s %-14s %3s %8s %8s %8s %9s %7s %-28s", "cell", "allocator",
                "n", "base MiB", "peak MiB", "+base", "live MiB", "frag",
                ("peak effect vs " + baseline + " [95% CI]").c_str());
  head = buf;
  for (const double a : afters) {
    std::snprintf(buf, sizeof buf, " %8s %-28s",
                  ("+" + fixed_number(a, a < 1 ? 1 : 0) + "s MiB").c_str(), "effect [95% CI]");
    head += buf;
  }
  out << "memory: RssAnon of the child read by the parent from /proc (stream excluded); "
         "base = before the replay, +base = peak minus base, frag = +base / live; "
         "effect > 1 = less memory than "
      << baseline << "\n"
      << head << "\n";
  constexpr double kMiB = 1.0 / 1048576;
  for (const Json& cell : summary.at("cells")) {
    const std::string name = cell.at("workload").get<std::string>() +
                             " t=" + std::to_string(cell.at("threads").get<unsigned>()) +
                             (cell.value("oversubscribed", false) ? " (over)" : "");
    for (const Json& row : cell.at("allocators")) {
      if (!row.contains("memory")) continue;
      const Json& m = row.at("memory");
      std::snprintf(buf, sizeof buf, "%-24s %-14s %3s %8s %8s %8s %9s %7s %-28s", name.c_str(),
                    row.at("allocator").get<std::string>().c_str(),
                    std::to_string(m.at("samples").get<std::size_t>()).c_str(),
                    fixed_number(m.at("baseline_anon_bytes").at("median"), 2, kMiB).c_str(),
                    fixed_number(m.at("peak_anon_bytes").at("median"), 2, kMiB).c_str(),
                    fixed_number(m.at("peak_above_baseline_bytes").at("median"), 2, kMiB).c_str(),
                    fixed_number(m.at("peak_live_bytes").at("median"), 3, kMiB).c_str(),
                    fixed_number(m.at("fragmentation").at("median"), 2).c_str(),
                    effect_text(m.at("peak_effect_vs_baseline")).c_str());
      std::string line = buf;
      for (const double a : afters) {
        const Json* point = nullptr;
        for (const Json& r : m.at("return_points")) {
          if (r.at("after_seconds").get<double>() == a) point = &r;
        }
        std::snprintf(
            buf, sizeof buf, " %8s %-28s",
            point ? fixed_number((*point).at("anon_bytes").at("median"), 2, kMiB).c_str() : "-",
            point ? effect_text((*point).at("effect_vs_baseline")).c_str() : "-");
        line += buf;
      }
      out << line << "\n";
    }
  }
}

// The latency table, when any row has latency: per row the schedule's rate, the medians over
// samples of p50, p99, p99.9 and max (microseconds), and the paired effects of p50, p99, p99.9.
void print_latency_table(std::ostream& out, const Json& summary) {
  bool any = false;
  for (const Json& cell : summary.at("cells")) {
    for (const Json& row : cell.at("allocators")) any |= row.contains("latency");
  }
  if (!any) return;
  const std::string baseline = summary.at("baseline").get<std::string>();
  char buf[640];
  out << "latency: open loop, completion - intended start of every op, medians over samples (us); "
         "effect = "
      << baseline << " / allocator per block, > 1 = lower latency than " << baseline << "\n";
  std::snprintf(buf, sizeof buf, "%-24s %-14s %3s %9s %8s %8s %9s %9s %-28s %-28s %-28s\n", "cell",
                "allocator", "n", "Mops/s", "p50", "p99", "p99.9", "max", "p50 effect [95% CI]",
                "p99 effect [95% CI]", "p99.9 effect [95% CI]");
  out << buf;
  constexpr double kMicro = 1e-3;
  for (const Json& cell : summary.at("cells")) {
    const std::string name = cell.at("workload").get<std::string>() +
                             " t=" + std::to_string(cell.at("threads").get<unsigned>()) +
                             (cell.value("oversubscribed", false) ? " (over)" : "");
    for (const Json& row : cell.at("allocators")) {
      if (!row.contains("latency")) continue;
      const Json& l = row.at("latency");
      std::snprintf(buf, sizeof buf, "%-24s %-14s %3s %9s %8s %8s %9s %9s %-28s %-28s %-28s\n",
                    name.c_str(), row.at("allocator").get<std::string>().c_str(),
                    std::to_string(l.at("samples").get<std::size_t>()).c_str(),
                    fixed_number(l.at("rate_ops_per_sec").at("median"), 3, 1e-6).c_str(),
                    fixed_number(l.at("p50_ns").at("median"), 3, kMicro).c_str(),
                    fixed_number(l.at("p99_ns").at("median"), 3, kMicro).c_str(),
                    fixed_number(l.at("p999_ns").at("median"), 2, kMicro).c_str(),
                    fixed_number(l.at("max_ns").at("median"), 1, kMicro).c_str(),
                    effect_text(l.at("p50_effect_vs_baseline")).c_str(),
                    effect_text(l.at("p99_effect_vs_baseline")).c_str(),
                    effect_text(l.at("p999_effect_vs_baseline")).c_str());
      out << buf;
    }
  }
}

// The pairs to report: the command line's, else those the run's campaign recorded. Every
// allocator a pair names must be in the run (with samples, or listed as unavailable), so a
// mistyped id is an error rather than an empty row.
std::vector<ComparisonPair> summary_pairs(const Json& raw,
                                          const std::vector<ComparisonPair>& pairs_override) {
  std::vector<ComparisonPair> pairs = pairs_override;
  const Json& campaign = raw.at("campaign");
  if (pairs.empty() && campaign.contains("pairs")) {
    for (const Json& p : campaign.at("pairs")) {
      pairs.push_back({p.at(0).get<std::string>(), p.at(1).get<std::string>()});
    }
  }
  std::set<std::string> known;
  for (const Json& a : raw.at("allocators")) known.insert(a.at("id").get<std::string>());
  for (const Json& s : raw.at("samples")) known.insert(s.at("allocator").get<std::string>());
  for (const ComparisonPair& p : pairs) {
    for (const std::string& id : {p.candidate, p.reference}) {
      if (!known.contains(id)) {
        throw RawRunError("pair " + p.candidate + ":" + p.reference + " names '" + id +
                          "', which is not an allocator of this run");
      }
    }
  }
  return pairs;
}

// Per pair and cell: the candidate's throughput against its reference's, paired by block as
// the baseline effects are (same bootstrap, its seed keyed by the two ids).
Json pairs_json(const std::vector<Cell>& cells, const std::vector<ComparisonPair>& pairs,
                std::uint64_t seed) {
  Json out = Json::array();
  for (const ComparisonPair& p : pairs) {
    Json per_cell = Json::array();
    for (const Cell& cell : cells) {
      per_cell.push_back({{"workload", cell.workload},
                          {"threads", cell.threads},
                          {"effect", effect_json(cell, p.candidate, p.reference, seed)}});
    }
    out.push_back({{"candidate", p.candidate}, {"reference", p.reference}, {"cells", per_cell}});
  }
  return out;
}

// "cost": the candidate's extra time per op against its reference, 1/effect - 1, in percent,
// with the interval mapped the same way (the ends swap).
std::string cost_text(const Json& e) {
  if (e.is_null() || e.at("paired_blocks").get<std::size_t>() == 0) return "no paired blocks";
  const auto pct = [](const Json& effect) {
    const double v = effect.get<double>();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", (1.0 / v - 1.0) * 100.0);
    return std::string(buf);
  };
  if (!e.at("effect").is_number()) return "-";
  std::string s = pct(e.at("effect"));
  if (e.value("ci_valid", false)) {
    s += " [" + pct(e.at("ci_high")) + ", " + pct(e.at("ci_low")) + "]";
    if (e.at("ci_low").get<double>() > 1 || e.at("ci_high").get<double>() < 1) s += " *";
  }
  return s;
}

// The pairs table: per pair and cell, the paired throughput effect and the cost it means.
void print_pairs_table(std::ostream& out, const Json& summary) {
  if (!summary.contains("pairs")) return;
  out << "pairs: candidate against its own reference, paired by block; effect = candidate / "
         "reference ops/s (> 1 = candidate faster), cost = extra time per op (1/effect - 1)\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-14s %-14s %-28s %s\n", "cell", "candidate", "reference",
                "effect [95% CI]", "cost [95% CI]");
  out << line;
  for (const Json& pair : summary.at("pairs")) {
    for (const Json& c : pair.at("cells")) {
      const std::string name = c.at("workload").get<std::string>() +
                               " t=" + std::to_string(c.at("threads").get<unsigned>());
      const Json& e = c.at("effect");
      std::snprintf(line, sizeof line, "%-24s %-14s %-14s %-28s %s\n", name.c_str(),
                    pair.at("candidate").get<std::string>().c_str(),
                    pair.at("reference").get<std::string>().c_str(),
                    e.at("paired_blocks").get<std::size_t>() == 0 ? "-" : effect_text(e).c_str(),
                    cost_text(e).c_str());
      out << line;
    }
  }
}

Json summarize_campaign_run(const Json& raw, const std::string& baseline_override,
                            const std::vector<ComparisonPair>& pairs_override) {
  const std::string baseline = summary_baseline(raw, baseline_override);
  const std::vector<ComparisonPair> pairs = summary_pairs(raw, pairs_override);
  const auto seed = raw.at("seed").get<std::uint64_t>();

  std::vector<Cell> cells;
  std::map<std::pair<std::string, unsigned>, std::size_t> cell_index;
  auto cell_of = [&](const std::string& w, unsigned t) -> Cell& {
    auto [it, fresh] = cell_index.try_emplace({w, t}, cells.size());
    if (fresh) cells.push_back(Cell{w, t, {}, {}});
    return cells[it->second];
  };
  for (const Json& cal : raw.at("calibration")) {
    cell_of(cal.at("workload").get<std::string>(), cal.at("threads").get<unsigned>());
  }
  Json failures = Json::array();
  bool baseline_seen = false;
  for (const Json& s : raw.at("samples")) {
    Cell& cell = cell_of(s.at("workload").get<std::string>(), s.at("threads").get<unsigned>());
    const auto alloc = s.at("allocator").get<std::string>();
    baseline_seen |= alloc == baseline;
    if (s.at("status") == "ok") {
      const Json& m = s.at("measurement");
      cell.oversubscribed |= m.value("oversubscribed", false);
      cell.ok[alloc].push_back({s.at("block").get<std::uint64_t>(),
                                m.at("ops_per_sec").get<double>(), m.value("peak_rss_bytes", 0.0),
                                m.value("stream_digest", std::string()), memory_of(s),
                                latency_of(m)});
    } else {
      ++cell.failed[alloc];
      failures.push_back(failure_entry(s));
    }
  }
  require_baseline_samples(raw, baseline, baseline_seen);

  Json cells_json = Json::array();
  for (const Cell& cell : cells) {
    Json allocs = Json::array();
    std::set<std::string> ids;
    for (const auto& [id, _] : cell.ok) ids.insert(id);
    for (const auto& [id, _] : cell.failed) ids.insert(id);
    // Digest agreement per block: every allocator replayed the same stream.
    std::map<std::uint64_t, std::set<std::string>> digests;
    for (const auto& [id, points] : cell.ok) {
      for (const Point& p : points) digests[p.block].insert(p.digest);
    }
    Json mismatches = Json::array();
    for (const auto& [block, set] : digests) {
      if (set.size() > 1) mismatches.push_back(block);
    }
    for (const std::string& id :
         baseline_first(baseline, std::vector<std::string>(ids.begin(), ids.end()))) {
      std::vector<double> rates, rss;
      if (auto it = cell.ok.find(id); it != cell.ok.end()) {
        for (const Point& p : it->second) {
          rates.push_back(p.rate);
          rss.push_back(p.rss);
        }
      }
      const auto failed_it = cell.failed.find(id);
      Json row{{"allocator", id},
               {"n", rates.size()},
               {"failed", failed_it == cell.failed.end() ? 0 : failed_it->second},
               {"ops_per_sec", summary_to_json(stats::summarize(rates))},
               {"peak_rss_bytes", {{"median", number_or_null(stats::median(rss))}}}};
      row["effect_vs_baseline"] = id == baseline ? Json() : effect_json(cell, id, baseline, seed);
      if (Json memory = memory_json(cell, id, baseline, seed); !memory.is_null())
        row["memory"] = std::move(memory);
      if (Json latency = latency_json(cell, id, baseline, seed); !latency.is_null())
        row["latency"] = std::move(latency);
      allocs.push_back(row);
    }
    cells_json.push_back({{"workload", cell.workload},
                          {"threads", cell.threads},
                          {"oversubscribed", cell.oversubscribed},
                          {"allocators", allocs},
                          {"digest_mismatches", mismatches}});
  }

  Json summary = summary_envelope(raw, raw.at("campaign").value("name", ""), seed, baseline,
                                  {{"metric", "ops_per_sec"}});
  finish_summary(summary, raw, std::move(cells_json), std::move(failures));
  if (!pairs.empty()) summary["pairs"] = pairs_json(cells, pairs, seed);
  return summary;
}

}  // namespace

Json summarize_raw_run(const Json& raw, const std::string& baseline_override,
                       const std::vector<ComparisonPair>& pairs_override) {
  // load_raw_run checks the fields every reader needs; a field only the summary reads (a
  // measurement, the memory record) can still be missing or mistyped: the reads use at() and
  // get<>(), which throw, and the error becomes the reader's own.
  try {
    if (is_app_run(raw)) {
      if (!pairs_override.empty()) throw RawRunError("pairs are for campaign runs, not app runs");
      return summarize_app_run(raw, baseline_override);
    }
    if (is_suite_run(raw)) {
      if (!pairs_override.empty()) throw RawRunError("pairs are for campaign runs, not suites");
      return summarize_suite_run(raw, baseline_override);
    }
    return summarize_campaign_run(raw, baseline_override, pairs_override);
  } catch (const nlohmann::json::exception& e) {
    throw RawRunError(std::string("the raw run cannot be summarized: ") + e.what());
  }
}

namespace {

void print_campaign_report(std::ostream& out, const Json& summary) {
  if (summary.contains("application")) {
    print_app_report(out, summary);
    return;
  }
  if (summary.contains("suite")) {
    print_suite_report(out, summary);
    return;
  }
  const std::string baseline = summary.at("baseline").get<std::string>();
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-14s %3s %12s %10s %-28s %7s %9s\n", "cell", "allocator",
                "n", "Mops/s med", "IQR", ("effect vs " + baseline + " [95% CI]").c_str(), "MDE",
                "RSS MiB");
  out << "campaign " << summary.at("campaign").get<std::string>() << ", seed "
      << summary.at("seed").get<std::uint64_t>() << "; effect > 1 = faster than " << baseline
      << "\n"
      << line;
  for (const Json& cell : summary.at("cells")) {
    const std::string name = cell.at("workload").get<std::string>() +
                             " t=" + std::to_string(cell.at("threads").get<unsigned>()) +
                             (cell.value("oversubscribed", false) ? " (over)" : "");
    for (const Json& row : cell.at("allocators")) {
      const Json& e = row.at("effect_vs_baseline");
      const std::string mde =
          !e.is_null() && e.value("ci_valid", false) ? fixed_number(e.at("mde_ratio"), 3) : "";
      std::snprintf(line, sizeof line, "%-24s %-14s %3s %12s %10s %-28s %7s %9s\n", name.c_str(),
                    row.at("allocator").get<std::string>().c_str(), sample_count_text(row).c_str(),
                    fixed_number(row.at("ops_per_sec").at("median"), 3, 1e-6).c_str(),
                    fixed_number(row.at("ops_per_sec").at("iqr"), 3, 1e-6).c_str(),
                    effect_text(e).c_str(), mde.c_str(),
                    fixed_number(row.at("peak_rss_bytes").at("median"), 1, 1.0 / 1048576).c_str());
      out << line;
    }
    if (!cell.at("digest_mismatches").empty()) {
      out << "  !! stream digests disagree within blocks " << cell.at("digest_mismatches").dump()
          << "\n";
    }
  }
  out << "* CI excludes 1.0. n+kF = k failed samples. (over) = more threads than CPUs. samples: "
      << summary.at("samples").at("ok") << " ok, " << summary.at("samples").at("failed")
      << " failed\n";
  print_pairs_table(out, summary);
  print_memory_table(out, summary);
  print_latency_table(out, summary);
  print_unavailable_and_failed(out, summary);
}

}  // namespace

void print_report(std::ostream& out, const Json& summary) {
  // A summary may come from a file the summary schema accepts yet lacks a field this table
  // prints (the reader fuzz target found one): an error of the summary, not a crash.
  try {
    print_campaign_report(out, summary);
  } catch (const nlohmann::json::exception& e) {
    throw RawRunError(std::string("the summary cannot be printed: ") + e.what());
  }
}

}  // namespace heapscope::harness
