// JSON form of the registry: printed by `hsbench allocators --json` and embedded as allocator
// provenance in run records. Versioned, because other tools read it.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "harness/registry/allocator_registry.h"

namespace heapscope::harness {

inline constexpr int kAllocatorsSchemaVersion = 1;

nlohmann::ordered_json allocator_to_json(const AllocatorInfo& info);

// {"schema": "heapscope.allocators", "schema_version": 1, "allocators": [...]}
nlohmann::ordered_json registry_to_json(const std::vector<AllocatorInfo>& infos);

}  // namespace heapscope::harness
