// memory.html: per run and cell, RssAnon over the replay and after the drain, one line per
// allocator (each the sample whose peak is that allocator's median in the cell), from the
// memory protocol's bounded timelines (raw runs of schema version 4 and later).
#include <algorithm>
#include <cmath>

#include "charts.h"
#include "number_format.h"
#include "page_common.h"

namespace heapscope::site {
namespace {

std::string seconds_label(double s) { return "+" + fixed(s, s < 1 ? 1 : 0) + " s"; }

// The chart of one cell, or "" when no allocator has a timeline there.
std::string cell_chart(const Json& run, const RunAllocators& allocs, const std::string& workload,
                       unsigned threads) {
  const Json& summary = run["summary"];
  std::vector<std::string> all{run["baseline"].get<std::string>()};
  all.insert(all.end(), allocs.candidates.begin(), allocs.candidates.end());
  std::vector<double> afters;
  for (const std::string& a : all) {
    const Json* row = summary_row(summary, workload, threads, a);
    if (row == nullptr || !row->contains("memory") || !(*row)["memory"].contains("timeline")) {
      continue;
    }
    for (const Json& r : (*row)["memory"]["timeline"]["return_points"]) {
      const double after = number(r["after_seconds"]);
      if (std::find(afters.begin(), afters.end(), after) == afters.end()) afters.push_back(after);
    }
  }
  std::sort(afters.begin(), afters.end());
  TimelineChart chart;
  chart.id = anchor("mem-" + run["run_id"].get<std::string>() + "-" + workload + "-t" +
                    std::to_string(threads));
  chart.title = workload + ", " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") +
                ": RssAnon over time";
  for (const double a : afters) chart.return_labels.push_back(seconds_label(a));
  for (const std::string& a : all) {
    const Json* row = summary_row(summary, workload, threads, a);
    if (row == nullptr || !row->contains("memory") || !(*row)["memory"].contains("timeline")) {
      continue;
    }
    const Json& t = (*row)["memory"]["timeline"];
    TimelineSeries s;
    s.name = a;
    s.color = allocs.color.at(a);
    s.replay_seconds = number(t["drained_at_seconds"]);
    const double span = s.replay_seconds > 0 ? s.replay_seconds : 1;
    const std::size_t n = std::min(t["seconds"].size(), t["anon_bytes"].size());
    for (std::size_t i = 0; i < n; ++i) {
      s.replay.emplace_back(number(t["seconds"][i]) / span, number(t["anon_bytes"][i]));
    }
    for (const Json& r : t["return_points"]) {
      const auto slot = std::find(afters.begin(), afters.end(), number(r["after_seconds"]));
      s.returns.emplace_back(static_cast<std::size_t>(slot - afters.begin()),
                             number(r["anon_bytes"]));
    }
    chart.series.push_back(std::move(s));
  }
  if (chart.series.empty()) return "";
  chart.desc = "Per allocator its median-peak sample; dashed line: the drain; then RssAnon at " +
               std::to_string(afters.size()) + " return point(s).";
  return "<figure>" + timeline_chart(chart) + "<figcaption>" + html_escape(chart.desc) +
         "</figcaption></figure>\n";
}

}  // namespace

std::string memory_page(const SiteModel& model) {
  std::string body =
      "<h1>Memory over time</h1>\n<p>How each allocator's resident memory grows while the "
      "workload replays its stream and what it gives back after the workload has freed "
      "everything: the memory protocol (RssAnon read from /proc by the parent, the stream "
      "excluded). Each chart is one cell; each line one sample of an allocator, the one whose "
      "peak is that allocator's median in the cell, drawn against the share of its own replay "
      "time, so allocators that replay the identical stream at different speeds line up by "
      "progress. The dashed line marks the drain (every block freed); after it, RssAnon at each "
      "return point. Hover a point for its value. Peak ratios with confidence intervals are on "
      "the <a href=\"index.html\">overview</a>.</p>\n";
  bool any = false;
  for (const Json& run : model.latest["runs"]) {
    if (!is_throughput_run(run)) continue;
    const RunAllocators allocs = run_allocators(run);
    const Json& summary = run["summary"];
    std::string charts;
    for (unsigned t : summary_threads(summary)) {
      for (const std::string& w : summary_workloads(summary))
        charts += cell_chart(run, allocs, w, t);
    }
    if (charts.empty()) continue;
    any = true;
    body += run_section(run, "<div class=\"grid\">\n" + charts + "</div>");
  }
  if (!any) {
    body +=
        "<p class=\"note\">No published run has memory timelines (they come with the memory "
        "protocol from raw-run schema version 4).</p>\n";
  }
  return html_page("heapscope: memory over time", kMemoryPage, body);
}

}  // namespace heapscope::site
