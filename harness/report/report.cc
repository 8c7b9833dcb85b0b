#include "harness/report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "harness/report/app_report.h"
#include "stats/bootstrap_seed.h"
#include "stats/paired_effect.h"
#include "stats/quantile.h"

namespace heapscope::harness {
namespace {

struct Point {
  std::uint64_t block;
  double rate;
  double rss;
  std::string digest;
};

struct Cell {
  std::string workload;
  unsigned threads = 0;
  std::map<std::string, std::vector<Point>> ok;  // allocator -> successful samples
  std::map<std::string, std::size_t> failed;
  bool oversubscribed = false;  // threads > online CPUs, as the child saw it
};

Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(); }

Json effect_json(const Cell& cell, const std::string& cand, const std::string& base,
                 std::uint64_t seed) {
  const auto cit = cell.ok.find(cand);
  const auto bit = cell.ok.find(base);
  std::vector<double> c, b;
  if (cit != cell.ok.end() && bit != cell.ok.end()) {
    std::unordered_map<std::uint64_t, double> base_by_block;
    for (const Point& p : bit->second) base_by_block[p.block] = p.rate;
    for (const Point& p : cit->second) {
      if (auto it = base_by_block.find(p.block); it != base_by_block.end()) {
        c.push_back(p.rate);
        b.push_back(it->second);
      }
    }
  }
  const std::string key =
      cell.workload + "/" + std::to_string(cell.threads) + "/ops_per_sec/" + cand + "/" + base;
  stats::BootstrapConfig config;
  config.seed = stats::bootstrap_seed(seed, key);
  return paired_effect_to_json(
      stats::paired_effect(c, b, stats::Direction::kHigherIsBetter, config));
}

}  // namespace

Json summary_to_json(const stats::Summary& s) {
  return {{"median", number_or_null(s.median)},
          {"q1", number_or_null(s.q1)},
          {"q3", number_or_null(s.q3)},
          {"iqr", number_or_null(s.iqr)},
          {"min", number_or_null(s.min)},
          {"max", number_or_null(s.max)},
          {"relative_iqr", number_or_null(s.relative_iqr)}};
}

Json paired_effect_to_json(const stats::PairedEffect& e) {
  Json j{{"paired_blocks", e.blocks},
         {"effect", number_or_null(e.effect)},
         {"ci_low", number_or_null(e.ci_low)},
         {"ci_high", number_or_null(e.ci_high)},
         {"mde_ratio", number_or_null(e.mde_ratio)},
         {"ci_valid", e.ci_valid},
         {"bootstrap_seed", e.seed}};
  if (!e.problem.empty()) j["problem"] = e.problem;
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

Json summary_envelope(const Json& raw, const std::string& campaign, std::uint64_t seed,
                      const std::string& baseline, const Json& metric) {
  Json summary{{"schema", kSummarySchema},
               {"schema_version", kSummarySchemaVersion},
               {"campaign", campaign},
               {"seed", seed},
               {"baseline", baseline}};
  for (const auto& [key, value] : metric.items()) summary[key] = value;
  summary["effect_method"] = stats::kPairedEffectMethod;
  summary["mde_method"] = stats::kMdeMethod;
  summary["bootstrap_seed_method"] = stats::kBootstrapSeedMethod;
  summary["resamples"] = 10000;
  summary["confidence"] = 0.95;
  summary["complete"] = raw.value("complete", false);
  summary["hosts"] = raw.contains("hosts") ? raw["hosts"] : Json::array();
  return summary;
}

Json unavailable_allocators_json(const Json& raw) {
  Json unavailable = Json::array();
  for (const Json& a : raw["allocators"]) {
    if (!a.value("available", false)) {
      unavailable.push_back({{"id", a.value("id", "")}, {"reason", a.value("reason", "")}});
    }
  }
  return unavailable;
}

void print_unavailable_and_failed(std::ostream& out, const Json& summary) {
  for (const Json& u : summary["unavailable_allocators"]) {
    out << "unavailable: " << u["id"].get<std::string>() << ": " << u["reason"].get<std::string>()
        << "\n";
  }
  for (const Json& f : summary["failures"]) {
    out << "failed: " << f["id"].get<std::string>() << ": " << f["kind"].get<std::string>() << ": "
        << f["reason"].get<std::string>() << "\n";
  }
}

Json summarize_raw_run(const Json& raw, const std::string& baseline_override) {
  if (is_app_run(raw)) return summarize_app_run(raw, baseline_override);
  const std::string baseline =
      baseline_override.empty() ? raw.value("baseline", std::string("glibc")) : baseline_override;
  const auto seed = raw["seed"].get<std::uint64_t>();

  std::vector<Cell> cells;
  std::map<std::pair<std::string, unsigned>, std::size_t> cell_index;
  auto cell_of = [&](const std::string& w, unsigned t) -> Cell& {
    auto [it, fresh] = cell_index.try_emplace({w, t}, cells.size());
    if (fresh) cells.push_back(Cell{w, t, {}, {}});
    return cells[it->second];
  };
  for (const Json& cal : raw["calibration"]) {
    cell_of(cal["workload"].get<std::string>(), cal["threads"].get<unsigned>());
  }
  Json failures = Json::array();
  std::size_t ok_count = 0;
  bool baseline_seen = false;
  for (const Json& s : raw["samples"]) {
    Cell& cell = cell_of(s["workload"].get<std::string>(), s["threads"].get<unsigned>());
    const auto alloc = s["allocator"].get<std::string>();
    baseline_seen |= alloc == baseline;
    if (s["status"] == "ok") {
      const Json& m = s["measurement"];
      cell.oversubscribed |= m.value("oversubscribed", false);
      cell.ok[alloc].push_back({s["block"].get<std::uint64_t>(), m["ops_per_sec"].get<double>(),
                                m.value("peak_rss_bytes", 0.0),
                                m.value("stream_digest", std::string())});
      ++ok_count;
    } else {
      ++cell.failed[alloc];
      const Json& f = s.contains("failure") ? s["failure"] : Json::object();
      failures.push_back({{"id", s["id"]},
                          {"kind", f.value("kind", "unknown")},
                          {"reason", f.value("reason", "")}});
    }
  }
  if (!baseline_seen && !raw["samples"].empty()) {
    throw RawRunError("baseline '" + baseline + "' has no samples in this run");
  }

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
    // Baseline first, then the others in id order.
    std::vector<std::string> order;
    if (ids.contains(baseline)) order.push_back(baseline);
    for (const auto& id : ids) {
      if (id != baseline) order.push_back(id);
    }
    for (const std::string& id : order) {
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
      allocs.push_back(row);
    }
    cells_json.push_back({{"workload", cell.workload},
                          {"threads", cell.threads},
                          {"oversubscribed", cell.oversubscribed},
                          {"allocators", allocs},
                          {"digest_mismatches", mismatches}});
  }

  Json summary = summary_envelope(raw, raw["campaign"].value("name", ""), seed, baseline,
                                  {{"metric", "ops_per_sec"}});
  summary["samples"] = {
      {"total", raw["samples"].size()}, {"ok", ok_count}, {"failed", failures.size()}};
  summary["cells"] = cells_json;
  summary["failures"] = failures;
  summary["unavailable_allocators"] = unavailable_allocators_json(raw);
  return summary;
}

void print_report(std::ostream& out, const Json& summary) {
  if (summary.contains("application")) {
    print_app_report(out, summary);
    return;
  }
  const std::string baseline = summary["baseline"].get<std::string>();
  auto num = [](const Json& v, int digits, double scale) {
    if (!v.is_number()) return std::string("-");
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v.get<double>() * scale);
    return std::string(buf);
  };
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-14s %3s %12s %10s %-28s %7s %9s\n", "cell", "allocator",
                "n", "Mops/s med", "IQR", ("effect vs " + baseline + " [95% CI]").c_str(), "MDE",
                "RSS MiB");
  out << "campaign " << summary["campaign"].get<std::string>() << ", seed "
      << summary["seed"].get<std::uint64_t>() << "; effect > 1 = faster than " << baseline << "\n"
      << line;
  for (const Json& cell : summary["cells"]) {
    const std::string name = cell["workload"].get<std::string>() +
                             " t=" + std::to_string(cell["threads"].get<unsigned>()) +
                             (cell.value("oversubscribed", false) ? " (over)" : "");
    for (const Json& row : cell["allocators"]) {
      std::string effect = "(baseline)";
      std::string mde = "";
      const Json& e = row["effect_vs_baseline"];
      if (!e.is_null()) {
        effect = num(e["effect"], 3, 1);
        if (e.value("ci_valid", false)) {
          effect += " [" + num(e["ci_low"], 3, 1) + ", " + num(e["ci_high"], 3, 1) + "]";
          if (e["ci_low"].get<double>() > 1 || e["ci_high"].get<double>() < 1) effect += " *";
          mde = num(e["mde_ratio"], 3, 1);
        }
      }
      char n[32];
      if (row["failed"].get<std::size_t>() > 0) {
        std::snprintf(n, sizeof n, "%zu+%zuF", row["n"].get<std::size_t>(),
                      row["failed"].get<std::size_t>());
      } else {
        std::snprintf(n, sizeof n, "%zu", row["n"].get<std::size_t>());
      }
      std::snprintf(line, sizeof line, "%-24s %-14s %3s %12s %10s %-28s %7s %9s\n", name.c_str(),
                    row["allocator"].get<std::string>().c_str(), n,
                    num(row["ops_per_sec"]["median"], 3, 1e-6).c_str(),
                    num(row["ops_per_sec"]["iqr"], 3, 1e-6).c_str(), effect.c_str(), mde.c_str(),
                    num(row["peak_rss_bytes"]["median"], 1, 1.0 / 1048576).c_str());
      out << line;
    }
    if (!cell["digest_mismatches"].empty()) {
      out << "  !! stream digests disagree within blocks " << cell["digest_mismatches"].dump()
          << "\n";
    }
  }
  out << "* CI excludes 1.0. n+kF = k failed samples. (over) = more threads than CPUs. samples: "
      << summary["samples"]["ok"] << " ok, " << summary["samples"]["failed"] << " failed\n";
  print_unavailable_and_failed(out, summary);
}

}  // namespace heapscope::harness
