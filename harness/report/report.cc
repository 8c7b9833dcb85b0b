#include "harness/report/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "harness/report/app_report.h"
#include "harness/report/summary_model.h"
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

std::vector<BlockValue> rates_of(const Cell& cell, const std::string& id) {
  std::vector<BlockValue> out;
  if (auto it = cell.ok.find(id); it != cell.ok.end()) {
    for (const Point& p : it->second) out.push_back({p.block, p.rate});
  }
  return out;
}

Json effect_json(const Cell& cell, const std::string& cand, const std::string& base,
                 std::uint64_t seed) {
  const std::string key =
      cell.workload + "/" + std::to_string(cell.threads) + "/ops_per_sec/" + cand + "/" + base;
  return block_paired_effect(rates_of(cell, cand), rates_of(cell, base),
                             stats::Direction::kHigherIsBetter, seed, key);
}

}  // namespace

Json summarize_raw_run(const Json& raw, const std::string& baseline_override) {
  if (is_app_run(raw)) return summarize_app_run(raw, baseline_override);
  const std::string baseline = summary_baseline(raw, baseline_override);
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
  finish_summary(summary, raw, std::move(cells_json), std::move(failures));
  return summary;
}

void print_report(std::ostream& out, const Json& summary) {
  if (summary.contains("application")) {
    print_app_report(out, summary);
    return;
  }
  const std::string baseline = summary["baseline"].get<std::string>();
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
      const Json& e = row["effect_vs_baseline"];
      const std::string mde =
          !e.is_null() && e.value("ci_valid", false) ? fixed_number(e["mde_ratio"], 3) : "";
      std::snprintf(line, sizeof line, "%-24s %-14s %3s %12s %10s %-28s %7s %9s\n", name.c_str(),
                    row["allocator"].get<std::string>().c_str(), sample_count_text(row).c_str(),
                    fixed_number(row["ops_per_sec"]["median"], 3, 1e-6).c_str(),
                    fixed_number(row["ops_per_sec"]["iqr"], 3, 1e-6).c_str(),
                    effect_text(e).c_str(), mde.c_str(),
                    fixed_number(row["peak_rss_bytes"]["median"], 1, 1.0 / 1048576).c_str());
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
