// latency.html: per run with the open-loop latency protocol, each allocator's latency relative
// to the baseline at p50, p99 and p99.9 (paired, CI whiskers, log scale) per thread count, and
// the absolute percentiles (medians over samples).
#include <cmath>

#include "charts.h"
#include "number_format.h"
#include "page_common.h"

namespace heapscope::site {
namespace {

constexpr std::pair<const char*, const char*> kPercentiles[] = {
    {"p50", "p50"}, {"p99", "p99"}, {"p999", "p99.9"}};

bool has_latency(const Json& summary) {
  for (const Json& cell : summary["cells"]) {
    for (const Json& row : cell["allocators"]) {
      if (row.contains("latency")) return true;
    }
  }
  return false;
}

std::string micros(const Json& quantiles) {
  const double ns = number(quantiles["median"]);
  return std::isfinite(ns) ? fixed(ns / 1000, ns < 10'000 ? 2 : 1) : "n/a";
}

std::string run_latency(const Json& run, const RunAllocators& allocs) {
  const Json& summary = run["summary"];
  const std::string baseline = run["baseline"].get<std::string>();
  const std::string id = run["run_id"].get<std::string>();
  std::string out = "<div class=\"grid\">\n";
  for (unsigned t : summary_threads(summary)) {
    RatioChart chart;
    chart.id = anchor("lat-" + id + "-t" + std::to_string(t));
    chart.title = "Latency relative to " + baseline + ", " + std::to_string(t) + " thread" +
                  (t == 1 ? "" : "s");
    chart.desc =
        "Bars: paired ratio (median per-block ratio of the sample's percentile) of "
        "each allocator's open-loop latency to " +
        baseline +
        "'s, at p50, p99 and p99.9 per workload; whiskers: 95% bootstrap CI "
        "of that same percentile; log scale, " +
        baseline + " = 1.0.";
    chart.y_label = "latency relative to " + baseline + " (log)";
    chart.better = "below 1.0 = lower latency than " + baseline;
    chart.baseline = baseline;
    chart.series = allocs.candidates;
    for (const auto& a : allocs.candidates) chart.colors.push_back(allocs.color.at(a));
    for (const std::string& w : summary_workloads(summary)) {
      for (const auto& [key, label] : kPercentiles) {
        RatioGroup group{w + " " + label, {}};
        for (std::size_t s = 0; s < allocs.candidates.size(); ++s) {
          const Json* row = summary_row(summary, w, t, allocs.candidates[s]);
          if (row == nullptr || !row->contains("latency")) continue;
          const Json& e = (*row)["latency"][std::string(key) + "_effect_vs_baseline"];
          RatioBar bar;
          bar.series = s;
          // The effect is lower-is-better (baseline / candidate): the bar is its inverse.
          const double effect = e.is_object() ? number(e["effect"]) : std::nan("");
          bar.value = effect > 0 ? 1 / effect : std::nan("");
          if (e.is_object() && e.value("ci_valid", false)) {
            bar.ci = std::make_pair(1 / number(e["ci_high"]), 1 / number(e["ci_low"]));
          }
          bar.tooltip = w + ", " + std::to_string(t) + " threads, " + allocs.candidates[s] + ", " +
                        label + ": " + micros((*row)["latency"][std::string(key) + "_ns"]) +
                        " us, " + ratio(bar.value) + "x " + baseline + "'s";
          group.bars.push_back(bar);
        }
        if (!group.bars.empty()) chart.groups.push_back(group);
      }
    }
    if (chart.groups.empty()) continue;
    out += "<figure>" + ratio_chart(chart) + "<figcaption>" + html_escape(chart.desc) +
           "</figcaption></figure>\n";
  }
  std::vector<std::vector<std::string>> rows;
  for (const Json& cell : summary["cells"]) {
    for (const Json& row : cell["allocators"]) {
      if (!row.contains("latency")) continue;
      const Json& l = row["latency"];
      const Json& e = l["p999_effect_vs_baseline"];
      const std::string effect = effect_cell(e);
      rows.push_back({html_escape(cell["workload"].get<std::string>()),
                      std::to_string(cell["threads"].get<unsigned>()),
                      html_escape(row["allocator"].get<std::string>()),
                      std::to_string(l["samples"].get<int>()),
                      rate_si(number(l["rate_ops_per_sec"]["median"])), micros(l["p50_ns"]),
                      micros(l["p99_ns"]), micros(l["p999_ns"]), micros(l["max_ns"]), effect});
    }
  }
  return out + "</div>\n" +
         html_table(
             {"workload", "threads", "allocator", "samples", "schedule ops/s", "p50 us", "p99 us",
              "p99.9 us", "max us", "p99.9 effect vs " + html_escape(baseline) + " [95% CI]"},
             rows,
             "Open-loop latency (completion &minus; intended start, coordinated "
             "omission corrected), medians over samples; effect &gt; 1 = lower "
             "latency than the baseline; bold = CI excludes 1.0",
             "numbers");
}

}  // namespace

std::string latency_page(const SiteModel& model) {
  std::string body =
      "<h1>Latency</h1>\n<p>Per-operation latency from an open-loop schedule: every operation "
      "is due at an intended time, so a stall delays every later one and is counted "
      "(coordinated omission corrected). Percentiles per sample from log-linear histograms "
      "merged across threads.</p>\n";
  bool any = false;
  for (const Json& run : model.latest["runs"]) {
    if (!is_throughput_run(run) || !has_latency(run["summary"])) continue;
    any = true;
    body += run_section(run, run_latency(run, run_allocators(run)));
  }
  if (!any) {
    body +=
        "<p class=\"note\">No published run measured latency (<code>hsbench run "
        "--latency</code>).</p>\n";
  }
  return html_page("heapscope: latency", kLatencyPage, body);
}

}  // namespace heapscope::site
