#include "comparison_key.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "base/sha256.h"

namespace heapscope::site {
namespace {

Json value_or_null(const Json& object, const char* key) {
  return object.is_object() && object.contains(key) ? object[key] : Json();
}

Json workload_definitions(const Json& raw) {
  std::set<std::string> workloads;
  std::set<unsigned> threads;
  for (const Json& c : raw["calibration"]) {
    workloads.insert(c["workload"].get<std::string>());
    threads.insert(c["threads"].get<unsigned>());
  }
  for (const Json& s : raw["samples"]) {
    workloads.insert(s["workload"].get<std::string>());
    threads.insert(s["threads"].get<unsigned>());
  }
  const Json& campaign = raw["campaign"];
  Json application_argv;
  if (raw.contains("application")) application_argv = value_or_null(raw["application"], "argv");
  return Json{{"ids", workloads},
              {"threads", threads},
              {"target_seconds", value_or_null(campaign, "target_seconds")},
              {"fixed_ops", value_or_null(campaign, "ops")},
              {"verify", value_or_null(campaign, "verify")},
              {"application_argv", application_argv}};
}

// CPU model, architecture, CPU count and memory rounded to GiB: what the numbers depend on,
// not which VM image or kernel build happened to run them.
Json machine_classes(const Json& raw) {
  std::set<std::string> seen;
  Json classes = Json::array();
  if (!raw.contains("hosts")) return classes;
  for (const Json& h : raw["hosts"]) {
    const double mem_kb = h.value("mem_total_kb", 0.0);
    Json c{{"cpu_model", h.value("cpu_model", "")},
           {"machine", h.value("machine", "")},
           {"nproc", h.value("nproc", 0)},
           {"mem_gib", std::lround(mem_kb / 1048576.0)}};
    if (seen.insert(c.dump()).second) classes.push_back(c);
  }
  std::sort(classes.begin(), classes.end(),
            [](const Json& a, const Json& b) { return a.dump() < b.dump(); });
  return classes;
}

Json allocator_identities(const Json& raw) {
  Json list = Json::array();
  for (const Json& a : raw["allocators"]) {
    if (!a.value("available", true)) continue;
    list.push_back({{"id", a["id"]},
                    {"package", a.value("package", "")},
                    {"version", version_without_build(a.value("version", ""))},
                    {"options", a.contains("env") ? a["env"] : Json::object()}});
  }
  std::sort(list.begin(), list.end(),
            [](const Json& a, const Json& b) { return a["id"] < b["id"]; });
  return list;
}

}  // namespace

std::string version_without_build(const std::string& version) {
  return version.substr(0, version.find('+'));
}

Json comparison_key(const Json& raw, const std::string& baseline) {
  Json components{{"workloads", workload_definitions(raw)},
                  {"machine_class", {{"hosts", machine_classes(raw)}}},
                  {"allocators", allocator_identities(raw)},
                  {"baseline", baseline}};
  return Json{{"digest", base::sha256_hex(components.dump())},
              {"method", kComparisonKeyMethod},
              {"components", components}};
}

}  // namespace heapscope::site
