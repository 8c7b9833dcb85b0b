// Workloads about object lifetime and heap shape rather than call speed.
#include <numeric>
#include <vector>

#include "workloads/generators.h"
#include "workloads/size_draw.h"

namespace heapscope::workloads::gen {

// A large long-lived heap (kLongLivedObjects for the whole cell, built untimed) churned
// slowly: each step is a short-lived temporary (malloc, free a few steps later); one step
// in 16 also replaces a random long-lived object. Exercises fragmentation and the
// allocator's behaviour with a big resident set around a hot path.
void long_lived(GenContext& g) {
  const auto live = static_cast<std::uint32_t>(share(kLongLivedObjects, g.threads, g.worker));
  const std::uint32_t temp0 = live;  // temporaries use slots [live, live + kLongLivedTemps)
  for (std::uint32_t s = 0; s < live; ++s)
    g.out.emit(Op::make(OpKind::kMalloc, s, log_uniform_size(g.rng, 16, 1024)));

  std::vector<bool> temp_live(kLongLivedTemps, false);
  const std::uint64_t budget = share(g.total_ops, g.threads, g.worker);
  g.out.begin_timed();
  while (g.out.timed_cost() < budget) {
    const auto t = static_cast<std::uint32_t>(g.rng.below(kLongLivedTemps));
    if (temp_live[t]) {
      g.out.emit(Op::make(OpKind::kFree, temp0 + t, 0));
    } else {
      g.out.emit(Op::make(OpKind::kMalloc, temp0 + t, log_uniform_size(g.rng, 16, 512)));
    }
    temp_live[t] = !temp_live[t];
    if (live > 0 && g.rng.below(16) == 0) {
      const auto s = static_cast<std::uint32_t>(g.rng.below(live));
      g.out.emit(Op::make(OpKind::kFree, s, 0));
      g.out.emit(Op::make(OpKind::kMalloc, s, log_uniform_size(g.rng, 16, 1024)));
    }
  }
  g.out.end_timed();
  for (std::uint32_t t = 0; t < kLongLivedTemps; ++t)
    if (temp_live[t]) g.out.emit(Op::make(OpKind::kFree, temp0 + t, 0));
  for (std::uint32_t s = 0; s < live; ++s) g.out.emit(Op::make(OpKind::kFree, s, 0));
}

// Sawtooth retain-and-drain: batches of kSawtoothBatch allocations (16 B–4 KiB); about a
// quarter of each batch is retained across batches, the rest freed in shuffled order;
// when kSawtoothRetainCap objects are retained, all of them are freed in shuffled order.
// The live set climbs to ~17k objects and falls to zero, over and over.
void sawtooth(GenContext& g) {
  const std::uint32_t batch0 = kSawtoothRetainCap;  // batch slots after the retained ones
  std::vector<std::uint32_t> retained, transient;
  std::vector<std::uint32_t> free_retained(kSawtoothRetainCap);
  std::iota(free_retained.rbegin(), free_retained.rend(), 0u);  // pop_back gives 0, 1, ...
  const std::uint64_t budget = share(g.total_ops, g.threads, g.worker);

  auto drain = [&](std::vector<std::uint32_t>& slots, bool to_pool) {
    base::shuffle(std::span<std::uint32_t>(slots), g.rng);
    for (const auto s : slots) {
      g.out.emit(Op::make(OpKind::kFree, s, 0));
      if (to_pool) free_retained.push_back(s);
    }
    slots.clear();
  };

  g.out.begin_timed();
  while (g.out.timed_cost() < budget) {
    for (std::uint32_t i = 0; i < kSawtoothBatch && g.out.timed_cost() < budget; ++i) {
      const std::uint64_t size = log_uniform_size(g.rng, 16, 4096);
      if (g.rng.below(4) == 0 && !free_retained.empty()) {
        const auto s = free_retained.back();
        free_retained.pop_back();
        retained.push_back(s);
        g.out.emit(Op::make(OpKind::kMalloc, s, size));
      } else {
        const auto s = batch0 + static_cast<std::uint32_t>(transient.size());
        transient.push_back(s);
        g.out.emit(Op::make(OpKind::kMalloc, s, size));
      }
    }
    drain(transient, false);
    if (free_retained.empty()) drain(retained, true);
  }
  g.out.end_timed();
  for (const auto s : retained) g.out.emit(Op::make(OpKind::kFree, s, 0));
}

}  // namespace heapscope::workloads::gen
