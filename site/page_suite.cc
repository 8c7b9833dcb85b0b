// suite.html: the suite runs (`hsbench suite`, harness/report/suite_report.h). Per run the
// geometric mean per allocator (the headline, also on the front page), the cases with their
// status, baseline and metric, and per case the paired effects on the metric and on peak RSS.
// Every number comes from the published summary; nothing is recomputed here.
#include <cmath>
#include <cstdio>

#include "html.h"
#include "page_common.h"

namespace heapscope::site {
namespace {

// "0.973 [0.961, 0.985]", bold when the interval excludes 1.0; "n/a" without a number.
std::string geomean_cell(const Json& g) {
  if (!g.is_object() || !g.contains("effect") || !g["effect"].is_number()) return "n/a";
  char buf[96];
  const double e = g["effect"].get<double>();
  if (!g.value("ci_valid", false)) {
    std::snprintf(buf, sizeof buf, "%.3f", e);
    return buf;
  }
  const double lo = number(g["ci_low"]);
  const double hi = number(g["ci_high"]);
  std::snprintf(buf, sizeof buf, "%.3f [%.3f, %.3f]", e, lo, hi);
  return lo > 1.0 || hi < 1.0 ? "<strong>" + std::string(buf) + "</strong>" : std::string(buf);
}

std::string text_of(const Json& obj, const char* key) {
  return obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : "";
}

}  // namespace

bool is_suite_run(const Json& run) {
  return run.contains("summary") && run["summary"].contains("suite");
}

std::string suite_geomean_table(const Json& run) {
  const Json& suite = run["summary"]["suite"];
  const std::string base = run["baseline"].get<std::string>();
  std::vector<std::vector<std::string>> rows;
  for (const Json& g : suite["geomean"]) {
    std::string left;
    for (const Json& l : g["left_out"]) left += (left.empty() ? "" : ", ") + text_of(l, "case");
    rows.push_back({html_escape(text_of(g, "allocator")),
                    std::to_string(g["metric_effect"].value("cases", 0)),
                    geomean_cell(g["metric_effect"]), geomean_cell(g["rss_effect"]),
                    left.empty() ? "-" : html_escape(left)});
  }
  return html_table({"allocator", "cases", "speed vs " + html_escape(base) + " [95% CI]",
                     "memory vs " + html_escape(base) + " [95% CI]", "cases left out"},
                    rows,
                    "Geometric mean over the cases of the paired per-case effects against " +
                        html_escape(base) +
                        " (&gt; 1 = faster / less peak RSS; CI: blocks resampled within each "
                        "case; bold = excludes 1.0)",
                    "numbers");
}

std::string suite_page(const SiteModel& model) {
  std::string body = "<h1>Suites of real programs</h1>\n";
  bool any = false;
  for (const Json& run : model.latest["runs"]) {
    if (!is_suite_run(run)) continue;
    any = true;
    const Json& summary = run["summary"];
    const Json& suite = summary["suite"];
    std::string content = "<p>Suite <code>" + html_escape(text_of(suite, "name")) + "</code>, " +
                          std::to_string(suite.value("blocks", 0)) + " blocks per case" +
                          (suite.value("quick", false) ? " (quick selection)" : "") +
                          ", inputs generated from seed " +
                          std::to_string(suite.value("input_seed", 0ULL)) + ".</p>\n";
    content += suite_geomean_table(run);
    std::vector<std::vector<std::string>> cases;
    for (const Json& c : suite["cases"]) {
      std::string notes = html_escape(text_of(c, "reason"));
      if (!text_of(c, "left_out_because").empty() && text_of(c, "status") == "ok") {
        notes += html_escape(text_of(c, "left_out_because"));
      }
      for (const Json& n : c["notes"]) {
        notes += (notes.empty() ? "" : "<br>") + html_escape(n.get<std::string>());
      }
      if (!text_of(c, "note").empty()) {
        notes += (notes.empty() ? "" : "<br>") + html_escape(text_of(c, "note"));
      }
      const Json& metric = c["metric"];
      cases.push_back({html_escape(text_of(c, "name")), html_escape(text_of(c, "status")),
                       html_escape(text_of(c, "baseline")),
                       html_escape(text_of(metric, "kind") + " (" + text_of(metric, "unit") + ", " +
                                   text_of(metric, "direction") + ")"),
                       html_escape(text_of(c, "rss")), c.value("in_geomean", false) ? "yes" : "no",
                       html_escape(text_of(c, "description")), notes});
    }
    content += html_table(
        {"case", "status", "baseline", "metric", "peak RSS of", "in geomean", "what runs", "notes"},
        cases, "Cases, with the preload probe's findings", "");
    std::vector<std::vector<std::string>> effects;
    for (const Json& cell : summary["cells"]) {
      for (const Json& row : cell["allocators"]) {
        effects.push_back({html_escape(cell["workload"].get<std::string>()),
                           html_escape(row["allocator"].get<std::string>()),
                           std::to_string(row["n"].get<int>()),
                           effect_cell(row.value("effect_vs_baseline", Json())),
                           effect_cell(row.value("rss_effect_vs_baseline", Json()))});
      }
    }
    content += html_table(
        {"case", "allocator", "n", "metric effect [95% CI]", "peak RSS effect [95% CI]"}, effects,
        "Per case, against the case's baseline: &gt; 1 = better (faster or "
        "more throughput; less peak RSS)",
        "numbers");
    body += run_section(run, content);
  }
  if (!any) body += "<p>No suite run is in this publication (<code>hsbench suite</code>).</p>\n";
  return html_page("heapscope suites", kSuitePage, body);
}

}  // namespace heapscope::site
