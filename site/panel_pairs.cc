// The run's paired comparisons besides the baseline's (summary "pairs", e.g. the profiler tax:
// engine-prof against engine): the throughput effect of the candidate over its reference in
// each cell, with the cost it implies.
#include <cmath>

#include "charts.h"
#include "number_format.h"
#include "panels.h"
#include "svg.h"

namespace heapscope::site {
namespace {

std::string pair_name(const Json& pair) {
  return pair["candidate"].get<std::string>() + " vs " + pair["reference"].get<std::string>();
}

// The cost of running the candidate instead of the reference: 1/effect - 1 as a percentage
// (positive = slower), with the interval mapped the same way (its ends swap).
std::string cost_text(const Json& e) {
  if (!e.is_object() || !(number(e["effect"]) > 0)) return "n/a";
  auto pct = [](double effect) { return fixed((1 / effect - 1) * 100, 1) + "%"; };
  std::string s = pct(number(e["effect"]));
  if (e.value("ci_valid", false)) {
    s += " [" + pct(number(e["ci_high"])) + ", " + pct(number(e["ci_low"])) + "]";
  }
  return s;
}

}  // namespace

std::string pairs_panel(const Json& run) {
  const Json& summary = run["summary"];
  if (!summary.contains("pairs") || !summary["pairs"].is_array() || summary["pairs"].empty()) {
    return "";
  }
  const Json& pairs = summary["pairs"];
  const std::string id = run["run_id"].get<std::string>();
  std::string out;
  for (unsigned t : summary_threads(summary)) {
    RatioChart chart;
    chart.id = anchor("pairs-" + id + "-t" + std::to_string(t));
    chart.title = "Paired comparisons, " + std::to_string(t) + " thread" + (t == 1 ? "" : "s");
    chart.desc =
        "Bars: paired effect (median per-block ops/s ratio) of each candidate over its "
        "own reference; whiskers: 95% bootstrap CI; log scale, the reference = 1.0.";
    chart.y_label = "ops/s relative to the reference (log)";
    chart.better = "below 1.0 = the candidate is slower (its cost)";
    chart.baseline = "reference";
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      chart.series.push_back(pair_name(pairs[p]));
      chart.colors.push_back(series_color(p));
    }
    for (const std::string& w : summary_workloads(summary)) {
      RatioGroup group{w, {}};
      for (std::size_t p = 0; p < pairs.size(); ++p) {
        for (const Json& cell : pairs[p]["cells"]) {
          if (cell["workload"] != w || cell["threads"] != t) continue;
          const Json& e = cell["effect"];
          RatioBar bar;
          bar.series = p;
          bar.value = e.is_object() ? number(e["effect"]) : std::nan("");
          if (e.is_object() && e.value("ci_valid", false)) {
            bar.ci = std::make_pair(number(e["ci_low"]), number(e["ci_high"]));
          }
          bar.tooltip = w + ", " + std::to_string(t) + " threads, " + pair_name(pairs[p]) + ": " +
                        effect_text(e) + ", cost " + cost_text(e);
          group.bars.push_back(bar);
        }
      }
      if (!group.bars.empty()) chart.groups.push_back(group);
    }
    if (chart.groups.empty()) continue;
    out += "<figure>" + ratio_chart(chart) + "<figcaption>" + html_escape(chart.desc) +
           "</figcaption></figure>\n";
  }
  std::vector<std::vector<std::string>> rows;
  for (const Json& pair : pairs) {
    for (const Json& cell : pair["cells"]) {
      const Json& e = cell["effect"];
      const std::string effect = e.is_null() ? "n/a" : effect_cell(e);
      rows.push_back({html_escape(pair["candidate"].get<std::string>()),
                      html_escape(pair["reference"].get<std::string>()),
                      html_escape(cell["workload"].get<std::string>()),
                      std::to_string(cell["threads"].get<unsigned>()), effect, cost_text(e)});
    }
  }
  return out + html_table({"candidate", "reference", "workload", "threads", "effect [95% CI]",
                           "cost [95% CI]"},
                          rows,
                          "Paired effects of each candidate over its reference: &gt; 1 = faster; "
                          "cost = 1/effect &minus; 1 (positive = slower); bold = CI excludes 1.0",
                          "numbers");
}

}  // namespace heapscope::site
