#include "representative_samples.h"

#include <algorithm>
#include <vector>

namespace heapscope::site {
namespace {

double rate_of(const Json& sample) {
  if (sample["status"] != "ok") return -1;
  const Json& m = sample["measurement"];
  if (m.contains("ops_per_sec") && m["ops_per_sec"].is_number()) {
    return m["ops_per_sec"].get<double>();
  }
  // Application runs: shorter wall time = faster.
  if (m.contains("wall_seconds") && m["wall_seconds"].is_number()) {
    const double wall = m["wall_seconds"].get<double>();
    return wall > 0 ? 1 / wall : 0;
  }
  return 0;
}

}  // namespace

std::map<CellAllocator, const Json*> representative_samples(const Json& raw) {
  std::map<CellAllocator, std::vector<const Json*>> groups;
  for (const Json& s : raw["samples"]) {
    groups[{s["workload"].get<std::string>(), s["threads"].get<unsigned>(),
            s["allocator"].get<std::string>()}]
        .push_back(&s);
  }
  std::map<CellAllocator, const Json*> chosen;
  for (auto& [key, samples] : groups) {
    std::vector<const Json*> ok;
    for (const Json* s : samples) {
      if (rate_of(*s) >= 0) ok.push_back(s);
    }
    if (ok.empty()) {
      chosen[key] = samples.front();
      continue;
    }
    // Ties broken by block so the choice does not depend on sample order.
    std::sort(ok.begin(), ok.end(), [](const Json* a, const Json* b) {
      const double ra = rate_of(*a), rb = rate_of(*b);
      if (ra != rb) return ra < rb;
      return (*a)["block"].get<std::uint64_t>() < (*b)["block"].get<std::uint64_t>();
    });
    chosen[key] = ok[(ok.size() - 1) / 2];
  }
  return chosen;
}

}  // namespace heapscope::site
