// The machine a sample ran on (harness/docs/protocol.md#campaigns: the host is part of each
// sample's provenance): uname, CPU model, online CPUs, memory. Read, never controlled.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace heapscope::harness {

// {"hostname", "sysname", "release", "version", "machine", "cpu_model", "nproc", "mem_total_kb"}
nlohmann::ordered_json host_info();

}  // namespace heapscope::harness
