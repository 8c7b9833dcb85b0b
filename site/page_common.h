// Helpers shared by the page builders (page_*.cc): per-run allocator colours and orders, cell
// lookups, short labels.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "html.h"

namespace heapscope::site {

// Non-baseline allocators of a run that have rows in the summary, in the raw run's order,
// each with its colour; the baseline maps to kBaselineColor.
struct RunAllocators {
  std::vector<std::string> candidates;
  std::map<std::string, std::string> color;
};
RunAllocators run_allocators(const Json& run);

// Sorted thread counts and workloads (first-seen order) of a summary.
std::vector<unsigned> summary_threads(const Json& summary);
std::vector<std::string> summary_workloads(const Json& summary);

// The summary row of (workload, threads, allocator), or nullptr.
const Json* summary_row(const Json& summary, const std::string& workload, unsigned threads,
                        const std::string& allocator);

// "<workload>/t<threads>/<allocator>" as a fragment id of reproduce.html.
std::string reproduce_anchor(const std::string& run_id, const std::string& workload,
                             unsigned threads, const std::string& allocator);

// "1.027 [1.018, 1.036]" or "n/a".
std::string effect_text(const Json& effect);
// A table cell: effect_text in bold when the interval excludes 1.0; "baseline" for null.
std::string effect_cell(const Json& effect);

// A campaign run (ops/s summary) rather than an application run (wall-time summary).
bool is_throughput_run(const Json& run);

// A suite run (`hsbench suite`: its summary has a "suite" section), and its headline table
// (page_suite.cc): the geometric mean per allocator with its CI.
bool is_suite_run(const Json& run);
std::string suite_geomean_table(const Json& run);

// The heading of a run's section.
std::string run_heading(const Json& run);
// A run's section: its heading (anchored by the run id) and `content`.
std::string run_section(const Json& run, const std::string& content);

}  // namespace heapscope::site
