#include "harness/campaign/campaign_setup.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <random>

#include "harness/campaign/raw_run_header.h"
#include "harness/campaign/workload_program.h"

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

std::string choose_baseline(const std::string& requested, const std::vector<std::string>& active,
                            std::initializer_list<const char*> preferred,
                            const std::string& scope) {
  if (!requested.empty()) {
    if (!contains(active, requested)) {
      throw CampaignError("baseline '" + requested + "' is not an available allocator " + scope);
    }
    return requested;
  }
  for (const char* id : preferred) {
    if (contains(active, id)) return id;
  }
  return active.empty() ? std::string() : active.front();
}

const AllocatorInfo* ResolvedCampaign::allocator(const std::string& id) const {
  return find_allocator(allocators, id);
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
    std::vector<std::string> added;
    spec.allocators = with_user_allocators(spec.allocators, specs, &added);
    for (const std::string& id : added) {
      std::cerr << "hsbench: allocator " << id
                << " given with --allocator but not in --allocators: added to the campaign\n";
    }
    specs = select_allocators(specs, spec.allocators);
  } else {
    specs = default_allocators(std::move(specs));
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

  c.baseline = choose_baseline(spec.baseline, c.active, {"mimalloc", "glibc"}, "of this campaign");
  c.spec = std::move(spec);
  return c;
}

Json new_raw_run(const ResolvedCampaign& c) {
  return new_raw_run_header({.campaign = c.spec,
                             .seed = c.seed,
                             .baseline = c.baseline,
                             .active = c.active,
                             .workload_program = c.program,
                             .allocators = c.allocators});
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
