// Panels of a run's section on index.html that have their own data: the speed-memory Pareto
// scatter (panel_pareto.cc) and the paired comparisons such as the profiler tax (panel_pairs.cc).
// Each returns "" when the run has nothing for it.
#pragma once

#include <string>

#include "page_common.h"

namespace heapscope::site {

// Per candidate, the geometric means over the cells where both are measured of its peak RssAnon
// ratio to the baseline (x) and its throughput effect (y); upper left = faster and smaller.
std::string pareto_panel(const Json& run, const RunAllocators& allocs);

// The summary's "pairs" (candidate against a reference other than the baseline): effect bars
// with CI whiskers per thread count and a table with the cost, 1/effect - 1, and its interval.
std::string pairs_panel(const Json& run);

}  // namespace heapscope::site
