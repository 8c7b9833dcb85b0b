#include "harness/registry/allocator_registry.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "base/sha256.h"
#include "harness/registry/package_version.h"

namespace heapscope::harness {
namespace {

bool valid_id(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

std::string known_ids(const std::vector<AllocatorSpec>& specs) {
  std::string ids;
  for (const AllocatorSpec& s : specs) ids += (ids.empty() ? "" : ", ") + s.id;
  return ids;
}

bool has_id(const std::vector<AllocatorSpec>& specs, const std::string& id) {
  return std::any_of(specs.begin(), specs.end(), [&](const auto& s) { return s.id == id; });
}

AllocatorSpec user_spec(const std::string& name_eq_path) {
  const size_t eq = name_eq_path.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == name_eq_path.size()) {
    throw RegistryError("--allocator expects NAME=PATH, got '" + name_eq_path + "'");
  }
  AllocatorSpec spec;
  spec.id = name_eq_path.substr(0, eq);
  if (!valid_id(spec.id)) {
    throw RegistryError("allocator name '" + spec.id + "' may use only letters, digits, - _ .");
  }
  std::error_code ec;
  const std::filesystem::path path = name_eq_path.substr(eq + 1);
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw RegistryError("allocator '" + spec.id + "': no such library file: " + path.string());
  }
  spec.library = std::filesystem::absolute(path, ec).string();
  spec.description = "user-supplied library";
  spec.missing_reason = "file missing";
  spec.user_supplied = true;
  return spec;
}

}  // namespace

std::vector<AllocatorSpec> registry_specs(const RegistryOptions& options) {
  std::vector<AllocatorSpec> specs = builtin_allocator_specs(options.engine);
  for (const std::string& arg : options.user_allocators) {
    AllocatorSpec spec = user_spec(arg);
    if (has_id(specs, spec.id)) {
      throw RegistryError("allocator id '" + spec.id +
                          "' is already taken; known ids: " + known_ids(specs));
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::vector<AllocatorSpec> select_allocators(const std::vector<AllocatorSpec>& specs,
                                             const std::vector<std::string>& ids) {
  std::vector<AllocatorSpec> chosen;
  for (const std::string& id : ids) {
    auto it = std::find_if(specs.begin(), specs.end(), [&](const auto& s) { return s.id == id; });
    if (it == specs.end()) {
      throw RegistryError("unknown allocator id '" + id + "'; known ids: " + known_ids(specs));
    }
    if (!has_id(chosen, id)) chosen.push_back(*it);
  }
  return chosen;
}

std::vector<AllocatorSpec> default_allocators(std::vector<AllocatorSpec> specs) {
  std::erase_if(specs, [](const AllocatorSpec& s) { return s.opt_in; });
  return specs;
}

std::vector<std::string> with_user_allocators(std::vector<std::string> ids,
                                              const std::vector<AllocatorSpec>& specs,
                                              std::vector<std::string>* added) {
  if (ids.empty()) return ids;
  for (const AllocatorSpec& s : specs) {
    if (s.user_supplied && std::find(ids.begin(), ids.end(), s.id) == ids.end()) {
      ids.push_back(s.id);
      added->push_back(s.id);
    }
  }
  return ids;
}

const AllocatorInfo* find_allocator(const std::vector<AllocatorInfo>& infos,
                                    const std::string& id) {
  for (const AllocatorInfo& a : infos) {
    if (a.spec.id == id) return &a;
  }
  return nullptr;
}

AllocatorInfo inspect_allocator(const AllocatorSpec& spec, const ProbeCommand& probe) {
  AllocatorInfo info;
  info.spec = spec;
  std::error_code ec;
  if (spec.library.empty() || !std::filesystem::exists(spec.library, ec)) {
    info.reason = spec.missing_reason + ": " + (spec.library.empty() ? "(no path)" : spec.library);
    return info;
  }
  info.resolved_path = std::filesystem::canonical(spec.library, ec).string();

  std::string error;
  if (spec.version_source == VersionSource::kBuildTree) {
    info.package = "heapscope";
    info.version = spec.build_version;
  } else if (auto pkg = debian_package_of(spec.library, &error)) {
    info.package = pkg->package;
    info.version = pkg->version;
  }
  if (auto digest = base::sha256_file_hex(info.resolved_path, &error)) info.sha256 = *digest;

  if (info.sha256.empty()) {
    info.reason = "unreadable: " + error;
  } else if (!spec.unavailable_reason.empty()) {
    info.reason = spec.unavailable_reason;
  } else if (auto problem =
                 allocator_library_problem(info.resolved_path, child_environment(info), probe)) {
    info.reason = *problem;
  } else {
    info.available = true;
  }
  return info;
}

std::vector<std::string> child_environment(const AllocatorInfo& info) {
  std::vector<std::string> env;
  if (info.spec.preload) env.push_back("LD_PRELOAD=" + info.resolved_path);
  for (const auto& [key, value] : info.spec.env) env.push_back(key + "=" + value);
  return env;
}

void engine_subsystems_off_unless_set(std::vector<std::string>& env) {
  for (const char* name : {"HEAPSCOPE_PROF", "HEAPSCOPE_MEMORY_EVENTS"}) {
    const std::string key = std::string(name) + "=";
    if (std::none_of(env.begin(), env.end(),
                     [&](const std::string& e) { return e.starts_with(key); }))
      env.push_back(key + "0");
  }
}

}  // namespace heapscope::harness
