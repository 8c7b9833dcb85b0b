// Single-owner workloads: a slot table per worker; each step picks a slot and either
// fills it (when empty) or frees / reallocs it (when occupied). The toggle keeps the
// live set near half the slots without a planner queue.
#include <vector>

#include "workloads/generators.h"
#include "workloads/size_draw.h"

namespace heapscope::workloads::gen {
namespace {

struct Toggle {
  std::uint32_t slots;
  OpKind alloc_kind;
  unsigned realloc_in_8;  // of the steps hitting an occupied slot, this many in 8 realloc
};

template <class SizeFn, class AlignFn>
void run_toggle(GenContext& g, const Toggle& t, SizeFn size, AlignFn align) {
  std::vector<bool> live(t.slots, false);
  const std::uint64_t budget = share(g.total_ops, g.threads, g.worker);
  g.out.begin_timed();
  while (g.out.timed_cost() < budget) {
    const auto slot = static_cast<std::uint32_t>(g.rng.below(t.slots));
    if (!live[slot]) {
      // Separate statements: argument evaluation order is unspecified, draws are not.
      const std::uint64_t bytes = size();
      const unsigned align_log2 = align();
      g.out.emit(Op::make(t.alloc_kind, slot, bytes, 0, align_log2));
      live[slot] = true;
    } else if (t.realloc_in_8 != 0 && g.rng.below(8) < t.realloc_in_8) {
      g.out.emit(Op::make(OpKind::kRealloc, slot, size()));
    } else {
      g.out.emit(Op::make(OpKind::kFree, slot, 0));
      live[slot] = false;
    }
  }
  g.out.end_timed();
  for (std::uint32_t s = 0; s < t.slots; ++s)
    if (live[s]) g.out.emit(Op::make(OpKind::kFree, s, 0));
}

constexpr unsigned kNoAlign = 0;

}  // namespace

void tiny_hot(GenContext& g) {
  run_toggle(
      g, {64, OpKind::kMalloc, 0}, [&] { return uniform_size(g.rng, 16, 64); },
      [] { return kNoAlign; });
}

void general_mix(GenContext& g) {
  run_toggle(
      g, {1024, OpKind::kMalloc, 2}, [&] { return log_uniform_size(g.rng, 8, 4096); },
      [] { return kNoAlign; });
}

void large_buffers(GenContext& g) {
  run_toggle(
      g, {8, OpKind::kMalloc, 0}, [&] { return log_uniform_size(g.rng, 64 << 10, 4 << 20); },
      [] { return kNoAlign; });
}

void aligned(GenContext& g) {
  // Alignment 16..4096 (log2 4..12), size log-uniform 8 B–2 KiB: small objects with
  // alignments up to a page, where allocators differ most.
  run_toggle(
      g, {256, OpKind::kAligned, 0}, [&] { return log_uniform_size(g.rng, 8, 2048); },
      [&] { return static_cast<unsigned>(4 + g.rng.below(9)); });
}

void calloc_zero(GenContext& g) {
  run_toggle(
      g, {256, OpKind::kCalloc, 0}, [&] { return log_uniform_size(g.rng, 8, 16384); },
      [] { return kNoAlign; });
}

}  // namespace heapscope::workloads::gen
