// scaling.html: per run and workload, median ops/s against the thread count, one line per
// allocator; thread counts above the host's CPU count (threads > cores, from the raw run's
// host info) are shaded as oversubscribed.
#include "charts.h"
#include "number_format.h"
#include "page_common.h"

namespace heapscope::site {

std::string scaling_page(const SiteModel& model) {
  std::string body =
      "<h1>Thread scaling</h1>\n<p>Median throughput of every allocator at each "
      "thread count. Shaded: more threads than the host has CPUs "
      "(oversubscribed), where the numbers measure time-slicing as much as the "
      "allocator.</p>\n";
  for (const Json& run : model.latest["runs"]) {
    if (!is_throughput_run(run)) continue;
    const Json& summary = run["summary"];
    const RunAllocators allocs = run_allocators(run);
    const std::string id = run["run_id"].get<std::string>();
    const auto cores = run["machine"]["nproc"].get<unsigned>();
    const std::vector<unsigned> threads = summary_threads(summary);
    std::optional<std::size_t> shade_from;
    for (std::size_t i = 0; i < threads.size(); ++i) {
      if (cores > 0 && threads[i] > cores) {
        shade_from = i;
        break;
      }
    }
    std::vector<std::string> all{run["baseline"].get<std::string>()};
    all.insert(all.end(), allocs.candidates.begin(), allocs.candidates.end());
    body += "<section aria-labelledby=\"" + anchor(id) + "\"><h2 id=\"" + anchor(id) + "\">" +
            html_escape(run_heading(run)) + "</h2>\n<div class=\"grid\">\n";
    for (const std::string& w : summary_workloads(summary)) {
      LineChart chart;
      chart.id = anchor("sc-" + id + "-" + w);
      chart.title = w + ": throughput by thread count";
      chart.desc = "Median ops/s per allocator at " + std::to_string(threads.size()) +
                   " thread counts; host has " + std::to_string(cores) + " CPUs" +
                   (shade_from ? "; shaded points are oversubscribed." : ".");
      chart.x_label = "threads";
      chart.y_label = "median ops/s";
      chart.shade_from = shade_from;
      chart.shade_label = "oversubscribed (> " + std::to_string(cores) + " CPUs)";
      for (unsigned t : threads) chart.x_labels.push_back(std::to_string(t));
      for (const std::string& a : all) {
        LineSeries s{a, allocs.color.at(a), {}};
        for (std::size_t i = 0; i < threads.size(); ++i) {
          const Json* row = summary_row(summary, w, threads[i], a);
          if (row == nullptr) continue;
          const double median = number((*row)["ops_per_sec"]["median"]);
          s.points.push_back({i, median,
                              w + ", " + std::to_string(threads[i]) + " threads, " + a + ": " +
                                  rate_si(median) + "ops/s"});
        }
        chart.series.push_back(s);
      }
      body += "<figure>" + line_chart(chart) + "<figcaption>" + html_escape(chart.desc) +
              "</figcaption></figure>\n";
    }
    body += "</div></section>\n";
  }
  return html_page("heapscope: thread scaling", kScalingPage, body);
}

}  // namespace heapscope::site
