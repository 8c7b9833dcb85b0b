// The speed-memory scatter of a run: one point per allocator, the baseline at (1, 1).
#include <cmath>

#include "charts.h"
#include "number_format.h"
#include "panels.h"
#include "svg.h"

namespace heapscope::site {

std::string pareto_panel(const Json& run, const RunAllocators& allocs) {
  const Json& summary = run["summary"];
  const std::string baseline = run["baseline"].get<std::string>();
  ScatterChart chart;
  chart.id = anchor("pareto-" + run["run_id"].get<std::string>());
  chart.title = "Speed against memory, relative to " + baseline;
  chart.x_label = "peak RssAnon / " + baseline + " (log, geometric mean over cells)";
  chart.y_label = "ops/s / " + baseline + " (log)";
  chart.better = "shaded: faster and smaller than " + baseline;
  chart.points.push_back({baseline, kBaselineColor, baseline + ": the baseline (1.0, 1.0)", 1, 1});
  std::size_t cells_used = 0;
  for (const std::string& a : allocs.candidates) {
    double log_x = 0, log_y = 0;
    std::size_t n = 0;
    for (const Json& cell : summary["cells"]) {
      for (const Json& row : cell["allocators"]) {
        if (row["allocator"] != a || !row.contains("memory")) continue;
        const Json& speed = row["effect_vs_baseline"];
        const Json& memory = row["memory"]["peak_effect_vs_baseline"];
        if (!speed.is_object() || !memory.is_object()) continue;
        const double s = number(speed["effect"]), m = number(memory["effect"]);
        if (!(s > 0) || !(m > 0)) continue;
        log_y += std::log(s);
        log_x -= std::log(m);  // memory effect is baseline / candidate
        ++n;
      }
    }
    if (n == 0) continue;
    cells_used = std::max(cells_used, n);
    const double x = std::exp(log_x / static_cast<double>(n));
    const double y = std::exp(log_y / static_cast<double>(n));
    chart.points.push_back({a, allocs.color.at(a),
                            a + ": " + ratio(y) + "x the throughput, " + ratio(x) +
                                "x the peak RssAnon of " + baseline + " (" + std::to_string(n) +
                                " cells)",
                            x, y});
  }
  if (chart.points.size() < 2) return "";
  // The Pareto front: no other allocator is at least as fast with at most as much memory.
  // Points close together overlap in the chart, so the table beside it lists them all.
  std::string front;
  std::vector<std::vector<std::string>> rows;
  for (ScatterPoint& p : chart.points) {
    bool dominated = false;
    for (const ScatterPoint& q : chart.points) {
      dominated |= &q != &p && q.x <= p.x && q.y >= p.y && (q.x < p.x || q.y > p.y);
    }
    rows.push_back({html_escape(p.label), ratio(p.y), ratio(p.x), dominated ? "" : "yes"});
    if (dominated) continue;
    front += (front.empty() ? "" : ", ") + p.label;
    p.tooltip += "; on the Pareto front";
  }
  chart.desc = "One point per allocator: geometric means over the " + std::to_string(cells_used) +
               " cells with both paired effects; upper left is better. Pareto front (no other "
               "allocator both faster and smaller): " +
               front + ".";
  return "<figure>" + scatter_chart(chart) + "<figcaption>" + html_escape(chart.desc) +
         "</figcaption></figure>\n" +
         html_table({"allocator", "ops/s / " + html_escape(baseline),
                     "peak RssAnon / " + html_escape(baseline), "Pareto front"},
                    rows, "The scatter's points (geometric means over cells)", "numbers");
}

}  // namespace heapscope::site
