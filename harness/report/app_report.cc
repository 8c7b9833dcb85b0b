#include "harness/report/app_report.h"

#include <cstdio>
#include <limits>
#include <map>
#include <vector>

#include "harness/campaign/raw_run_header.h"
#include "harness/report/summary_model.h"
#include "stats/quantile.h"

namespace heapscope::harness {
namespace {

// A measurement field the sample lacks (a double: NAN alone would make value() return float).
constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

struct AppPoint {
  std::uint64_t block;
  double wall, user, sys, rss_tree, rss;
};

std::vector<BlockValue> by_block(const std::vector<AppPoint>& points, double AppPoint::*metric) {
  std::vector<BlockValue> out;
  out.reserve(points.size());
  for (const AppPoint& p : points) out.push_back({p.block, p.*metric});
  return out;
}

Json effect(const std::vector<AppPoint>& cand, const std::vector<AppPoint>& base,
            double AppPoint::*metric, const std::string& key, std::uint64_t seed) {
  return block_paired_effect(by_block(cand, metric), by_block(base, metric),
                             stats::Direction::kLowerIsBetter, seed, key);
}

std::vector<double> column(const std::vector<AppPoint>& points, double AppPoint::*metric) {
  std::vector<double> out;
  out.reserve(points.size());
  for (const AppPoint& p : points) out.push_back(p.*metric);
  return out;
}

}  // namespace

bool is_app_run(const Json& raw) { return raw.is_object() && raw.contains("application"); }

Json summarize_app_run(const Json& raw, const std::string& baseline_override) {
  const std::string baseline = summary_baseline(raw, baseline_override);
  const auto seed = raw.at("seed").get<std::uint64_t>();
  const std::string workload = raw.at("campaign").value("name", std::string("app"));

  std::map<std::string, std::vector<AppPoint>> ok;
  std::map<std::string, std::size_t> failed;
  std::map<std::string, std::size_t> differs;
  Json failures = Json::array();
  bool baseline_seen = false;
  for (const Json& s : raw.at("samples")) {
    const auto alloc = s.at("allocator").get<std::string>();
    baseline_seen |= alloc == baseline;
    if (s.at("status") == "ok") {
      const Json& m = s.at("measurement");
      ok[alloc].push_back({s.at("block").get<std::uint64_t>(), m.value("wall_seconds", kMissing),
                           m.value("user_seconds", kMissing), m.value("system_seconds", kMissing),
                           m.value("peak_rss_tree_bytes", kMissing),
                           m.value("peak_rss_bytes", kMissing)});
      continue;
    }
    ++failed[alloc];
    ok.try_emplace(alloc);
    failures.push_back(failure_entry(s));
    if (failures.back()["kind"] == "output-differs") ++differs[alloc];
  }
  require_baseline_samples(raw, baseline, baseline_seen);

  std::vector<std::string> ids;
  for (const auto& [id, _] : ok) ids.push_back(id);
  Json rows = Json::array();
  for (const std::string& id : baseline_first(baseline, ids)) {
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

  const Json& app = raw.at("application");
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
                            {"blocks", raw.at("campaign").value("blocks", 0)},
                            {"blocked", probe.value("blocked", false)},
                            {"problems", probe.value("problems", Json::array())},
                            {"notes", probe.value("notes", Json::array())}};
  finish_summary(summary, raw,
                 Json::array({{{"workload", workload},
                               {"threads", 1},
                               {"oversubscribed", false},
                               {"allocators", rows},
                               {"digest_mismatches", Json::array()}}}),
                 std::move(failures));
  return summary;
}

void print_app_report(std::ostream& out, const Json& summary) {
  const std::string base = summary.at("baseline").get<std::string>();
  const Json& app = summary.at("application");
  std::string command;
  for (const Json& a : app.at("argv")) {
    if (!command.empty()) command += ' ';
    command += a.get<std::string>();
  }
  out << summary.at("campaign").get<std::string>() << ": " << command << "\n";
  if (app.value("blocked", false) && summary.at("samples").at("total") == 0) {
    out << "no allocator comparison: the preload probe found it meaningless\n";
    for (const Json& p : app.at("problems")) out << "PROBLEM: " << p.get<std::string>() << "\n";
    return;
  }
  out << app.at("blocks") << " blocks, seed " << hex64(summary.at("seed").get<std::uint64_t>())
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
  for (const Json& cell : summary.at("cells")) {
    for (const Json& row : cell.at("allocators")) {
      const Json& wall = row.at("wall_seconds");
      const Json& rss = row.at("peak_rss_tree_bytes");
      const std::string wall_text =
          fixed_number(wall.at("median"), 4) + " (" + fixed_number(wall.at("iqr"), 4) + ")";
      const std::string rss_text = fixed_number(rss.at("median"), 1, 1.0 / 1048576) + " (" +
                                   fixed_number(rss.at("iqr"), 1, 1.0 / 1048576) + ")";
      std::snprintf(line, sizeof line, "%-14s %5s %-18s %-9s %-9s %-16s %-28s %s\n",
                    row.at("allocator").get<std::string>().c_str(), sample_count_text(row).c_str(),
                    wall_text.c_str(), fixed_number(row.at("user_seconds").at("median"), 4).c_str(),
                    fixed_number(row.at("system_seconds").at("median"), 4).c_str(),
                    rss_text.c_str(), effect_text(row.at("effect_vs_baseline")).c_str(),
                    effect_text(row.at("rss_effect_vs_baseline")).c_str());
      out << line;
      if (row.at("output_differs").get<std::size_t>() > 0) {
        out << "  !! " << row.at("allocator").get<std::string>() << ": stdout differed in "
            << row.at("output_differs") << " sample(s): those are failures, not averaged\n";
      }
    }
  }
  out << "n+kF = k failed samples (not in the statistics). samples: "
      << summary.at("samples").at("ok") << " ok, " << summary.at("samples").at("failed")
      << " failed\n";
  for (const Json& p : app.at("problems")) out << "PROBLEM: " << p.get<std::string>() << "\n";
  for (const Json& n : app.at("notes")) out << "note: " << n.get<std::string>() << "\n";
  print_unavailable_and_failed(out, summary);
}

}  // namespace heapscope::harness
