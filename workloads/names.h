// The built-in workloads' names, in the order of the table in registry.cc (which checks at
// compile time that the two agree). Header-only and dependency-free, so the harness names every
// workload (the headline campaign) from here without linking the generators.
#pragma once

#include <array>
#include <string_view>

namespace heapscope::workloads {

inline constexpr std::array<std::string_view, 10> kWorkloadNames = {
    "tiny-hot",          "general-mix", "large-buffers", "cross-thread", "long-lived",
    "producer-consumer", "sawtooth",    "thread-churn",  "aligned",      "calloc"};

}  // namespace heapscope::workloads
