#include "campaign_setup.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <random>

#include "allocator_json.h"
#include "block_order.h"
#include "host_info.h"
#include "workload_program.h"

namespace heapscope::harness {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

ProbeCommand self_probe() {
  std::error_code ec;
  return {std::filesystem::canonical("/proc/self/exe", ec).string(), "probe"};
}

std::uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string hex64(std::uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

const AllocatorInfo* ResolvedCampaign::allocator(const std::string& id) const {
  for (const AllocatorInfo& a : allocators) {
    if (a.spec.id == id) return &a;
  }
  return nullptr;
}

ResolvedCampaign resolve_campaign(CampaignSpec spec) {
  validate_campaign(spec);
  ResolvedCampaign c;
  if (!spec.seed) spec.seed = fresh_seed();
  c.seed = *spec.seed;

  c.program = find_workload_program();
  if (c.program.empty()) {
    throw CampaignError("cannot find hs-workload (set HEAPSCOPE_WORKLOAD_EXE)");
  }
  std::vector<std::string> known;
  try {
    known = list_workloads(c.program);
  } catch (const std::exception& e) {
    throw CampaignError(e.what());
  }
  for (const std::string& w : spec.workloads) {
    if (!contains(known, w)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw CampaignError("unknown workload '" + w + "'; known workloads: " + list);
    }
  }

  std::vector<AllocatorSpec> specs = registry_specs({engine_libraries(), spec.user_allocators});
  if (!spec.allocators.empty()) {
    specs = select_allocators(specs, spec.allocators);
  }
  for (const AllocatorSpec& s : specs) {
    c.allocators.push_back(inspect_allocator(s, self_probe()));
    const AllocatorInfo& info = c.allocators.back();
    if (info.available) {
      c.active.push_back(s.id);
    } else {
      std::cerr << "hsbench: allocator " << s.id << " unavailable, skipped: " << info.reason
                << "\n";
    }
  }
  if (c.active.empty()) throw CampaignError("no allocator of the campaign is available");

  if (!spec.baseline.empty()) {
    if (!contains(c.active, spec.baseline)) {
      throw CampaignError("baseline '" + spec.baseline +
                          "' is not an available allocator of this campaign");
    }
    c.baseline = spec.baseline;
  } else if (contains(c.active, "mimalloc")) {
    c.baseline = "mimalloc";
  } else if (contains(c.active, "glibc")) {
    c.baseline = "glibc";
  } else {
    c.baseline = c.active.front();
  }
  c.spec = std::move(spec);
  return c;
}

Json new_raw_run(const ResolvedCampaign& c) {
  Json allocators = Json::array();
  for (const AllocatorInfo& a : c.allocators) allocators.push_back(allocator_to_json(a));
  return Json{{"schema", kRawRunSchema},
              {"schema_version", kRawRunSchemaVersion},
              {"tool", {{"name", "hsbench"}, {"engine_version", engine_libraries().version}}},
              {"created", utc_now()},
              {"complete", false},
              {"campaign", campaign_to_json(c.spec)},
              {"seed", c.seed},
              {"seed_hex", hex64(c.seed)},
              {"baseline", c.baseline},
              {"active_allocators", c.active},
              {"workload_program", c.program},
              {"block_order_method", kBlockOrderMethod},
              {"hosts", Json::array({host_info()})},
              {"allocators", allocators},
              {"calibration", Json::array()},
              {"orders", Json::array()},
              {"samples", Json::array()}};
}

void check_same_campaign(const Json& raw, const ResolvedCampaign& c, const std::string& path) {
  if (raw["campaign"] != campaign_to_json(c.spec)) {
    throw RawRunError(path + ": recorded campaign differs from the requested one");
  }
  for (const Json& a : raw["allocators"]) {
    const AllocatorInfo* now = c.allocator(a.value("id", ""));
    if (now != nullptr && a.value("available", false) && now->sha256 != a.value("sha256", "")) {
      throw RawRunError(path + ": allocator " + now->spec.id +
                        " library changed since the run started (sha256 differs)");
    }
  }
}

}  // namespace heapscope::harness
