// Workloads where threads interact: blocks freed by another worker, and thread churn.
#include <vector>

#include "workloads/generators.h"
#include "workloads/size_draw.h"

namespace heapscope::workloads::gen {

// Cross-thread handoff: every worker allocates 16–512 B blocks, touches them and sends
// each to a uniformly chosen OTHER worker (itself when alone), draining its own inbox
// after a random 1–16 sends. Each send costs two calls (malloc here, free there).
void handoff(GenContext& g) {
  const std::uint64_t budget = share(g.total_ops, g.threads, g.worker);
  g.out.begin_timed();
  while (g.out.timed_cost() + 2 <= budget) {
    const auto burst = g.rng.between(1, 16);
    for (std::uint64_t i = 0; i < burst && g.out.timed_cost() + 2 <= budget; ++i) {
      const std::uint64_t size = uniform_size(g.rng, 16, 512);
      unsigned target = g.worker;
      if (g.threads > 1) {
        target = static_cast<unsigned>(g.rng.below(g.threads - 1));
        if (target >= g.worker) ++target;  // skip self
      }
      g.out.emit(Op::make(OpKind::kSend, 0, size, target));
    }
    g.out.emit(Op::make(OpKind::kDrain, 0, 0, 0));
  }
  g.out.end_timed();
}

// Producer/consumer: the first ceil(T/2) workers produce 64 B–4 KiB messages in bursts
// of 1–64 into a 256-deep queue of consumer P + p % C; consumers only receive, read the
// first byte and free. Alone, the worker produces a burst and then consumes it.
void producer_consumer(GenContext& g) {
  const unsigned producers = (g.threads + 1) / 2;
  const unsigned consumers = g.threads - producers;
  g.out.begin_timed();
  if (g.worker < producers) {
    const unsigned target = consumers == 0 ? g.worker : producers + g.worker % consumers;
    const std::uint64_t budget = share(g.total_ops, producers, g.worker);
    while (g.out.timed_cost() + 2 <= budget) {
      const auto burst = g.rng.between(1, 64);
      for (std::uint64_t i = 0; i < burst && g.out.timed_cost() + 2 <= budget; ++i)
        g.out.emit(Op::make(OpKind::kSend, 0, log_uniform_size(g.rng, 64, 4096), target));
      if (consumers == 0) g.out.emit(Op::make(OpKind::kDrain, 0, 0, 0));
    }
  }
  g.out.end_timed();  // consumers: empty stream; the final drain receives everything
}

// Thread churn: kChurnGenerations generations; in each, T fresh OS threads run 1/8 of
// their worker's budget of 16 B–1 KiB alloc/free toggles on 64 slots and exit. Slots
// persist across generations, so a new thread frees blocks a dead thread allocated.
void thread_churn(GenContext& g) {
  constexpr std::uint32_t kSlots = 64;
  std::vector<bool> live(kSlots, false);
  const std::uint64_t budget = share(g.total_ops, g.threads, g.worker);
  g.out.begin_timed();
  for (unsigned gen = 0; gen < kChurnGenerations; ++gen) {
    const std::uint64_t until = budget * (gen + 1) / kChurnGenerations;
    while (g.out.timed_cost() < until) {
      const auto slot = static_cast<std::uint32_t>(g.rng.below(kSlots));
      if (live[slot]) {
        g.out.emit(Op::make(OpKind::kFree, slot, 0));
      } else {
        g.out.emit(Op::make(OpKind::kMalloc, slot, log_uniform_size(g.rng, 16, 1024)));
      }
      live[slot] = !live[slot];
    }
    g.out.emit(Op::make(OpKind::kGenerationEnd, 0, 0));
  }
  g.out.end_timed();
  for (std::uint32_t s = 0; s < kSlots; ++s)
    if (live[s]) g.out.emit(Op::make(OpKind::kFree, s, 0));
}

}  // namespace heapscope::workloads::gen
