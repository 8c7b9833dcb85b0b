#include "page_common.h"

#include <algorithm>
#include <set>

#include "number_format.h"
#include "svg.h"

namespace heapscope::site {

RunAllocators run_allocators(const Json& run) {
  RunAllocators out;
  std::set<std::string> present;
  for (const Json& cell : run["summary"]["cells"]) {
    for (const Json& row : cell["allocators"]) present.insert(row["allocator"].get<std::string>());
  }
  const std::string baseline = run["baseline"].get<std::string>();
  out.color[baseline] = kBaselineColor;
  for (const Json& a : run["allocators"]) {
    const auto id = a["id"].get<std::string>();
    if (id == baseline || !present.contains(id)) continue;
    out.color[id] = series_color(out.candidates.size());
    out.candidates.push_back(id);
  }
  // Allocators with samples but not in the allocator list (hand-made runs): still drawn.
  for (const std::string& id : present) {
    if (!out.color.contains(id)) {
      out.color[id] = series_color(out.candidates.size());
      out.candidates.push_back(id);
    }
  }
  return out;
}

std::vector<unsigned> summary_threads(const Json& summary) {
  std::set<unsigned> t;
  for (const Json& cell : summary["cells"]) t.insert(cell["threads"].get<unsigned>());
  return {t.begin(), t.end()};
}

std::vector<std::string> summary_workloads(const Json& summary) {
  std::vector<std::string> w;
  for (const Json& cell : summary["cells"]) {
    const auto name = cell["workload"].get<std::string>();
    if (std::find(w.begin(), w.end(), name) == w.end()) w.push_back(name);
  }
  return w;
}

const Json* summary_row(const Json& summary, const std::string& workload, unsigned threads,
                        const std::string& allocator) {
  for (const Json& cell : summary["cells"]) {
    if (cell["workload"] != workload || cell["threads"] != threads) continue;
    for (const Json& row : cell["allocators"]) {
      if (row["allocator"] == allocator) return &row;
    }
  }
  return nullptr;
}

std::string reproduce_anchor(const std::string& run_id, const std::string& workload,
                             unsigned threads, const std::string& allocator) {
  return anchor("r-" + run_id + "-" + workload + "-t" + std::to_string(threads) + "-" + allocator);
}

std::string effect_text(const Json& e) {
  if (!e.is_object() || !e["effect"].is_number()) return "n/a";
  std::string s = ratio(number(e["effect"]));
  if (e.value("ci_valid", false)) {
    s += " [" + ratio(number(e["ci_low"])) + ", " + ratio(number(e["ci_high"])) + "]";
  }
  return s;
}

std::string effect_cell(const Json& e) {
  if (e.is_null()) return "baseline";
  const bool excludes_one = e.is_object() && e.value("ci_valid", false) &&
                            (number(e["ci_low"]) > 1 || number(e["ci_high"]) < 1);
  return excludes_one ? "<strong>" + effect_text(e) + "</strong>" : effect_text(e);
}

bool is_throughput_run(const Json& run) { return run["summary"]["metric"] == "ops_per_sec"; }

std::string run_heading(const Json& run) { return "Run " + run["run_id"].get<std::string>(); }

std::string run_section(const Json& run, const std::string& content) {
  const std::string id = anchor(run["run_id"].get<std::string>());
  return "<section aria-labelledby=\"" + id + "\"><h2 id=\"" + id + "\">" +
         html_escape(run_heading(run)) + "</h2>\n" + content + "</section>\n";
}

}  // namespace heapscope::site
