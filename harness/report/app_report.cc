#include "harness/report/app_report.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

#include "harness/campaign/raw_run_header.h"
#include "harness/report/report.h"
#include "stats/bootstrap_seed.h"
#include "stats/paired_effect.h"
#include "stats/quantile.h"

namespace heapscope::harness {
namespace {

// A measurement field the sample lacks (a double: NAN alone would make value() return float).
constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

struct AppPoint {
  std::uint64_t block;
  double wall, user, sys, rss_tree, rss;
};

Json effect(const std::vector<AppPoint>& cand, const std::vector<AppPoint>& base,
            double AppPoint::*metric, const std::string& key, std::uint64_t seed) {
  std::unordered_map<std::uint64_t, double> base_by_block;
  for (const AppPoint& p : base) base_by_block[p.block] = p.*metric;
  std::vector<double> c, b;
  for (const AppPoint& p : cand) {
    if (auto it = base_by_block.find(p.block); it != base_by_block.end()) {
      c.push_back(p.*metric);
      b.push_back(it->second);
    }
  }
  stats::BootstrapConfig config;
  config.seed = stats::bootstrap_seed(seed, key);
  return paired_effect_to_json(
      stats::paired_effect(c, b, stats::Direction::kLowerIsBetter, config));
}

std::vector<double> column(const std::vector<AppPoint>& points, double AppPoint::*metric) {
  std::vector<double> out;
  out.reserve(points.size());
  for (const AppPoint& p : points) out.push_back(p.*metric);
  return out;
}

std::string fixed(const Json& v, int digits, double scale = 1) {
  if (!v.is_number()) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v.get<double>() * scale);
  return buf;
}

// "1.234 [1.100, 1.300] *" or "(baseline)".
std::string effect_text(const Json& e) {
  if (e.is_null()) return "(baseline)";
  std::string s = fixed(e["effect"], 3);
  if (e.value("ci_valid", false)) {
    s += " [" + fixed(e["ci_low"], 3) + ", " + fixed(e["ci_high"], 3) + "]";
    if (e["ci_low"].get<double>() > 1 || e["ci_high"].get<double>() < 1) s += " *";
  }
  return s;
}

}  // namespace

bool is_app_run(const Json& raw) { return raw.is_object() && raw.contains("application"); }

Json summarize_app_run(const Json& raw, const std::string& baseline_override) {
  const std::string baseline =
      baseline_override.empty() ? raw.value("baseline", std::string("glibc")) : baseline_override;
  const auto seed = raw["seed"].get<std::uint64_t>();
  const std::string workload = raw["campaign"].value("name", std::string("app"));

  std::map<std::string, std::vector<AppPoint>> ok;
  std::map<std::string, std::size_t> failed;
  std::map<std::string, std::size_t> differs;
  Json failures = Json::array();
  bool baseline_seen = false;
  for (const Json& s : raw["samples"]) {
    const auto alloc = s["allocator"].get<std::string>();
    baseline_seen |= alloc == baseline;
    if (s["status"] == "ok") {
      const Json& m = s["measurement"];
      ok[alloc].push_back({s["block"].get<std::uint64_t>(), m.value("wall_seconds", kMissing),
                           m.value("user_seconds", kMissing), m.value("system_seconds", kMissing),
                           m.value("peak_rss_tree_bytes", kMissing),
                           m.value("peak_rss_bytes", kMissing)});
      continue;
    }
    ++failed[alloc];
    ok.try_emplace(alloc);
    const Json& f = s.contains("failure") ? s["failure"] : Json::object();
    if (f.value("kind", "") == "output-differs") ++differs[alloc];
    failures.push_back(
        {{"id", s["id"]}, {"kind", f.value("kind", "unknown")}, {"reason", f.value("reason", "")}});
  }
  if (!baseline_seen && !raw["samples"].empty()) {
    throw RawRunError("baseline '" + baseline + "' has no samples in this run");
  }

  // Baseline first, then the others in id order.
  std::vector<std::string> order;
  if (ok.contains(baseline)) order.push_back(baseline);
  for (const auto& [id, _] : ok) {
    if (id != baseline) order.push_back(id);
  }
  Json rows = Json::array();
  for (const std::string& id : order) {
    const std::vector<AppPoint>& points = ok[id];
    Json row{{"allocator", id},
             {"n", points.size()},
             {"failed", failed[id]},
             {"output_differs", differs[id]},
             {"wall_seconds", summary_to_json(stats::summarize(column(points, &AppPoint::wall)))},
             {"user_seconds", summary_to_json(stats::summarize(column(points, &AppPoint::user)))},
             {"system_seconds", summary_to_json(stats::summarize(column(points, &AppPoint::sys)))},
             {"peak_rss_tree_bytes",
              summary_to_json(stats::summarize(column(points, &AppPoint::rss_tree)))},
             {"peak_rss_bytes",
              {{"median",
                summary_to_json(stats::summarize(column(points, &AppPoint::rss))).at("median")}}}};
    if (id == baseline) {
      row["effect_vs_baseline"] = nullptr;
      row["rss_effect_vs_baseline"] = nullptr;
    } else {
      const std::string key = workload + "/1/";
      const std::vector<AppPoint>& base = ok[baseline];
      row["effect_vs_baseline"] =
          effect(points, base, &AppPoint::wall, key + "wall_seconds/" + id + "/" + baseline, seed);
      row["rss_effect_vs_baseline"] =
          effect(points, base, &AppPoint::rss_tree,
                 key + "peak_rss_tree_bytes/" + id + "/" + baseline, seed);
    }
    rows.push_back(row);
  }

  const Json& app = raw["application"];
  const Json probe = app.value("probe", Json::object());
  Json summary = summary_envelope(
      raw, workload, seed, baseline,
      {{"metric", "wall_seconds"},
       {"direction", "lower-is-better"},
       {"effect_definition",
        "exp(median over blocks of ln(baseline / candidate)): > 1 = candidate faster (wall) or "
        "smaller (peak RSS of the process tree) than the baseline"}});
  summary["application"] = {{"argv", app.value("argv", Json::array())},
                            {"cwd", app.value("cwd", "")},
                            {"stdin", app.value("stdin", "")},
                            {"same_output", app.value("same_output", false)},
                            {"blocks", raw["campaign"].value("blocks", 0)},
                            {"blocked", probe.value("blocked", false)},
                            {"problems", probe.value("problems", Json::array())},
                            {"notes", probe.value("notes", Json::array())}};
  summary["samples"] = {{"total", raw["samples"].size()},
                        {"ok", raw["samples"].size() - failures.size()},
                        {"failed", failures.size()}};
  summary["cells"] = Json::array({{{"workload", workload},
                                   {"threads", 1},
                                   {"oversubscribed", false},
                                   {"allocators", rows},
                                   {"digest_mismatches", Json::array()}}});
  summary["failures"] = failures;
  summary["unavailable_allocators"] = unavailable_allocators_json(raw);
  return summary;
}

void print_app_report(std::ostream& out, const Json& summary) {
  const std::string base = summary["baseline"].get<std::string>();
  const Json& app = summary["application"];
  std::string command;
  for (const Json& a : app["argv"]) {
    if (!command.empty()) command += ' ';
    command += a.get<std::string>();
  }
  out << summary["campaign"].get<std::string>() << ": " << command << "\n";
  if (app.value("blocked", false) && summary["samples"]["total"] == 0) {
    out << "no allocator comparison: the preload probe found it meaningless\n";
    for (const Json& p : app["problems"]) out << "PROBLEM: " << p.get<std::string>() << "\n";
    return;
  }
  out << app["blocks"] << " blocks, seed " << hex64(summary["seed"].get<std::uint64_t>())
      << ", baseline " << base
      << (app.value("same_output", false) ? ", stdout compared across all samples" : "") << "\n"
      << "medians (IQR); RSS = peak of the whole process tree. speed = " << base
      << " wall / allocator wall, memory = " << base << " RSS / allocator RSS:\n> 1 = better than "
      << base << " (faster, smaller), < 1 = worse; [95% bootstrap CI], * = CI excludes 1.0\n";
  char line[512];
  const std::string speed_head = "speed vs " + base + " [95% CI]";
  const std::string mem_head = "memory vs " + base + " [95% CI]";
  std::snprintf(line, sizeof line, "%-14s %5s %-18s %-9s %-9s %-16s %-28s %s\n", "allocator", "n",
                "wall s (IQR)", "user s", "sys s", "RSS MiB (IQR)", speed_head.c_str(),
                mem_head.c_str());
  out << line;
  for (const Json& cell : summary["cells"]) {
    for (const Json& row : cell["allocators"]) {
      const Json& wall = row["wall_seconds"];
      const Json& rss = row["peak_rss_tree_bytes"];
      const std::string wall_text = fixed(wall["median"], 4) + " (" + fixed(wall["iqr"], 4) + ")";
      const std::string rss_text =
          fixed(rss["median"], 1, 1.0 / 1048576) + " (" + fixed(rss["iqr"], 1, 1.0 / 1048576) + ")";
      std::string n = std::to_string(row["n"].get<std::size_t>());
      if (row["failed"].get<std::size_t>() > 0) {
        n += '+';
        n += std::to_string(row["failed"].get<std::size_t>());
        n += 'F';
      }
      std::snprintf(line, sizeof line, "%-14s %5s %-18s %-9s %-9s %-16s %-28s %s\n",
                    row["allocator"].get<std::string>().c_str(), n.c_str(), wall_text.c_str(),
                    fixed(row["user_seconds"]["median"], 4).c_str(),
                    fixed(row["system_seconds"]["median"], 4).c_str(), rss_text.c_str(),
                    effect_text(row["effect_vs_baseline"]).c_str(),
                    effect_text(row["rss_effect_vs_baseline"]).c_str());
      out << line;
      if (row["output_differs"].get<std::size_t>() > 0) {
        out << "  !! " << row["allocator"].get<std::string>() << ": stdout differed in "
            << row["output_differs"] << " sample(s): those are failures, not averaged\n";
      }
    }
  }
  out << "n+kF = k failed samples (not in the statistics). samples: " << summary["samples"]["ok"]
      << " ok, " << summary["samples"]["failed"] << " failed\n";
  for (const Json& p : app["problems"]) out << "PROBLEM: " << p.get<std::string>() << "\n";
  for (const Json& n : app["notes"]) out << "note: " << n.get<std::string>() << "\n";
  print_unavailable_and_failed(out, summary);
}

}  // namespace heapscope::harness
