#include "harness/campaign/raw_run_header.h"

#include <cstdio>
#include <ctime>

#include "harness/campaign/block_order.h"
#include "harness/registry/allocator_json.h"
#include "harness/registry/engine_libraries.h"
#include "harness/registry/host_info.h"

namespace heapscope::harness {

std::string hex64(std::uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Json new_raw_run_header(const RawRunHeaderFields& f) {
  Json allocators = Json::array();
  for (const AllocatorInfo& a : f.allocators) allocators.push_back(allocator_to_json(a));
  return Json{{"schema", kRawRunSchema},
              {"schema_version", kRawRunSchemaVersion},
              {"tool", {{"name", "hsbench"}, {"engine_version", engine_libraries().version}}},
              {"created", utc_now()},
              {"complete", false},
              {"campaign", campaign_to_json(f.campaign)},
              {"seed", f.seed},
              {"seed_hex", hex64(f.seed)},
              {"baseline", f.baseline},
              {"active_allocators", f.active},
              {"workload_program", f.workload_program},
              {"block_order_method", kBlockOrderMethod},
              {"hosts", Json::array({host_info()})},
              {"allocators", allocators},
              {"calibration", Json::array()},
              {"orders", Json::array()},
              {"samples", Json::array()}};
}

void add_this_host(Json& raw) {
  Json host = host_info();
  const std::string name = host.value("hostname", "");
  for (const Json& h : raw["hosts"]) {
    if (h.value("hostname", "") == name) return;
  }
  raw["hosts"].push_back(std::move(host));
}

}  // namespace heapscope::harness
