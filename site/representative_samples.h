// The sample a page's "reproduce" command names for each (workload, threads, allocator): the
// successful sample with the median ops/s (the lower middle one for an even count), so the
// command re-runs a typical sample; the first sample when none succeeded.
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "site_json.h"

namespace heapscope::site {

using CellAllocator = std::tuple<std::string, unsigned, std::string>;  // workload, threads, id

// Values point into `raw`.
std::map<CellAllocator, const Json*> representative_samples(const Json& raw);

}  // namespace heapscope::site
