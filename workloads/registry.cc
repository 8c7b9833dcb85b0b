// The table of built-in workloads: the one place their parameters are documented.
// `hs-workload --list` prints it as JSON; workloads/README.md mirrors it for the site.
#include <algorithm>
#include <array>

#include "workloads/generators.h"
#include "workloads/names.h"

namespace heapscope::workloads {
namespace {

using gen::kChurnGenerations;

// Upper bounds of emitted ops per worker (only written pages are committed).
std::uint64_t cap_toggle(std::uint64_t ops, unsigned t) { return ops / t + 2 + (1u << 11); }
std::uint64_t cap_long_lived(std::uint64_t ops, unsigned t) {
  return ops / t + 4 + 3 * (gen::kLongLivedObjects / t + 1) + 2 * gen::kLongLivedTemps;
}
std::uint64_t cap_sawtooth(std::uint64_t ops, unsigned t) {
  return ops / t + 2 * gen::kSawtoothBatch + 2 * gen::kSawtoothRetainCap + 8;
}
// Sends cost 2 and drains are at most one per send; a single producer may get all ops.
std::uint64_t cap_cross(std::uint64_t ops, unsigned) { return ops + 16; }
std::uint64_t cap_churn(std::uint64_t ops, unsigned t) {
  return ops / t + kChurnGenerations * 2 + 256;
}

constexpr std::array kWorkloads = {
    WorkloadSpec{"tiny-hot", "tiny hot path: malloc/free toggles on a small slot table",
                 "16–64 B uniform", "malloc 50% / free 50%", "≤64 objects per worker",
                 "1, 2, 4, 8; workers independent", Topology::kLocal, 0, cap_toggle, gen::tiny_hot},
    WorkloadSpec{"general-mix", "general mix with realloc", "8 B–4 KiB log-uniform",
                 "malloc 43% / free 43% / realloc 14%", "≤1024 objects per worker (~57% full)",
                 "1, 2, 4, 8; workers independent", Topology::kLocal, 0, cap_toggle,
                 gen::general_mix},
    WorkloadSpec{"large-buffers", "large buffers, one byte touched per 4 KiB page",
                 "64 KiB–4 MiB log-uniform", "malloc 50% / free 50%",
                 "≤8 buffers per worker (≤32 MiB)", "1, 2, 4, 8; workers independent",
                 Topology::kLocal, 0, cap_toggle, gen::large_buffers},
    WorkloadSpec{"cross-thread", "cross-thread handoff through bounded SPSC queues",
                 "16–512 B uniform",
                 "malloc here, free by a random other worker; drain every 1–16 sends",
                 "≤64 in flight per worker pair", "1 (self-handoff), 2, 4, 8",
                 Topology::kCrossThread, 64, cap_cross, gen::handoff},
    WorkloadSpec{"long-lived", "large long-lived heap churned slowly around temporaries",
                 "16 B–1 KiB log-uniform (live), 16–512 B (temporaries)",
                 "temp malloc/free toggles; 1 step in 16 also replaces a live object",
                 "262,144 objects per cell (~64 MiB), built untimed", "1, 2, 4, 8; live set split",
                 Topology::kLocal, 0, cap_long_lived, gen::long_lived},
    WorkloadSpec{"producer-consumer", "producers send bursts to consumers through 256-deep queues",
                 "64 B–4 KiB log-uniform", "producers malloc, consumers read and free; bursts 1–64",
                 "≤256 messages per queue", "ceil(T/2) producers, floor(T/2) consumers; 1: self",
                 Topology::kCrossThread, 256, cap_cross, gen::producer_consumer},
    WorkloadSpec{
        "sawtooth", "retain-and-drain sawtooth", "16 B–4 KiB log-uniform",
        "batches of 1024 mallocs; 3/4 freed shuffled, 1/4 retained until 16,384 then all freed",
        "0 → ~17k objects per worker, repeatedly", "1, 2, 4, 8; workers independent",
        Topology::kLocal, 0, cap_sawtooth, gen::sawtooth},
    WorkloadSpec{"thread-churn", "threads created and retired in the timed region",
                 "16 B–1 KiB log-uniform", "malloc/free toggles; 8 generations of fresh threads",
                 "≤64 objects per worker, inherited by the next generation",
                 "T threads per generation; thread creation is part of the workload",
                 Topology::kChurn, 0, cap_churn, gen::thread_churn},
    WorkloadSpec{"aligned", "aligned allocation (posix_memalign)", "8 B–2 KiB log-uniform",
                 "posix_memalign 50% / free 50%; alignment 16–4096 (powers of two, uniform)",
                 "≤256 objects per worker", "1, 2, 4, 8; workers independent", Topology::kLocal, 0,
                 cap_toggle, gen::aligned},
    WorkloadSpec{"calloc", "zeroed allocation", "8 B–16 KiB log-uniform", "calloc 50% / free 50%",
                 "≤256 objects per worker", "1, 2, 4, 8; workers independent", Topology::kLocal, 0,
                 cap_toggle, gen::calloc_zero},
};

constexpr bool names_match_the_table() {
  if (kWorkloads.size() != kWorkloadNames.size()) return false;
  for (std::size_t i = 0; i < kWorkloads.size(); ++i) {
    if (kWorkloads[i].name != kWorkloadNames[i]) return false;
  }
  return true;
}
static_assert(names_match_the_table(), "workloads/names.h must list this table's names in order");

}  // namespace

std::span<const WorkloadSpec> all_workloads() { return kWorkloads; }

const WorkloadSpec* find_workload(std::string_view name) {
  const auto it = std::find_if(kWorkloads.begin(), kWorkloads.end(),
                               [&](const WorkloadSpec& w) { return w.name == name; });
  return it == kWorkloads.end() ? nullptr : &*it;
}

}  // namespace heapscope::workloads
