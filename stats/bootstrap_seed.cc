#include "stats/bootstrap_seed.h"

#include <string_view>

#include "base/fnv1a.h"
#include "base/splitmix64.h"

namespace heapscope::stats {

std::uint64_t bootstrap_seed(std::uint64_t campaign_seed, std::string_view cell_key) {
  using namespace std::string_view_literals;
  // The domain tag keeps these seeds apart from other users of the same keys; the
  // NUL keeps "tag" + "key" unambiguous.
  std::uint64_t k = base::fnv1a64("heapscope/bootstrap-seed/v1\0"sv);
  k = base::fnv1a64(cell_key, k);
  return base::splitmix64_mix(base::splitmix64_mix(campaign_seed ^ base::kGolden) ^ k);
}

}  // namespace heapscope::stats
