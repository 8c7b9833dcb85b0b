#include "harness/registry/allocator_json.h"

namespace heapscope::harness {

nlohmann::ordered_json allocator_to_json(const AllocatorInfo& info) {
  nlohmann::ordered_json env = nlohmann::ordered_json::object();
  for (const auto& [key, value] : info.spec.env) env[key] = value;
  nlohmann::ordered_json j = {
      {"id", info.spec.id},
      {"description", info.spec.description},
      {"library", info.spec.library},
      {"resolved_path", info.resolved_path},
      {"ld_preload",
       info.spec.preload ? nlohmann::ordered_json(info.resolved_path) : nlohmann::ordered_json()},
      {"env", env},
      {"package", info.package},
      {"version", info.version},
      {"sha256", info.sha256},
      {"available", info.available},
  };
  if (!info.available) j["reason"] = info.reason;
  if (info.spec.opt_in) j["opt_in"] = true;  // run only when named, never in "every allocator"
  return j;
}

nlohmann::ordered_json registry_to_json(const std::vector<AllocatorInfo>& infos) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const AllocatorInfo& info : infos) list.push_back(allocator_to_json(info));
  return {{"schema", "heapscope.allocators"},
          {"schema_version", kAllocatorsSchemaVersion},
          {"allocators", list}};
}

}  // namespace heapscope::harness
