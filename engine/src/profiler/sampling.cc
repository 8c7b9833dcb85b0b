// The sampler: when a heap's byte countdown crosses zero, decide whether this allocation is
// a sample and draw the distance to the next one (samples.cc records the sample).
//
// Sample points form a Poisson process over allocated bytes: distances are exponential with
// mean = interval, drawn from a per-thread splitmix64 stream seeded from (session seed, thread
// creation ordinal), and the overshoot carries into the next distance. An allocation of s
// bytes is then sampled with probability 1 - exp(-s / interval), which is exactly what the
// pprof estimator divides by.
#include "base/splitmix64.h"
#include "profiler/prof_internal.h"
#include "support/exp_log.h"

namespace heapscope::prof {

namespace {

// While nothing samples, heaps look at the generation every this many allocated bytes (one
// slow-path call per MiB, unmeasurable): that is how a thread notices a session that another
// thread started. The thread that starts it re-arms its own heap at once.
constexpr int64_t kIdleRecheckBytes = int64_t{1} << 20;

// The next idle re-check after an allocation of `size`: a MiB, or 64 such allocations when that
// is more, never beyond 16 MiB (one huge block must not put off the small ones' re-check). A
// program of 64 KiB buffers otherwise took the re-check (an out-of-line call) every 16th
// malloc: pair/64KiB 4.5 ns instead of 3.9.
int64_t idle_recheck_bytes(size_t size) {
  constexpr size_t kRecheckAllocations = 64;
  constexpr int64_t kLongestRecheckBytes = 16 * kIdleRecheckBytes;
  if (size >= static_cast<size_t>(kLongestRecheckBytes) / kRecheckAllocations) {
    return kLongestRecheckBytes;
  }
  const auto by_count = static_cast<int64_t>(size * kRecheckAllocations);
  return by_count > kIdleRecheckBytes ? by_count : kIdleRecheckBytes;
}

int64_t draw_distance(ThreadData* td, uint64_t interval) {
  uint64_t seed_generation = g_seed_generation.load(std::memory_order_acquire);
  if (td->prof_rng_generation != seed_generation) {
    td->prof_rng_generation = seed_generation;
    uint64_t seed = g_seed_for_generation.load(std::memory_order_relaxed);
    td->prof_rng = base::splitmix64_mix(seed ^ base::splitmix64_mix(td->ordinal + 1));
  }
  td->prof_rng += base::kGolden;
  uint64_t bits = base::splitmix64_mix(td->prof_rng);
  double uniform = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
  double distance = -math::log1p(-uniform) * static_cast<double>(interval);
  if (distance > 0x1.0p62) distance = 0x1.0p62;
  // floor: the allocation that takes the countdown below zero is the one covering the point.
  return static_cast<int64_t>(distance);
}

}  // namespace

double sample_weight(uint64_t size, uint64_t interval) {
  if (interval <= 1 || size == 0) return 1.0;
  double probability = -math::expm1(-static_cast<double>(size) / static_cast<double>(interval));
  return probability > 0 ? 1.0 / probability : 1.0;
}

HS_HOT_TEXT uint64_t heap_interval(Heap* heap, hs_profiler_t** owner) {
  *owner = nullptr;
  if (heap->profile_disabled) return 0;
  hs_profiler_t* user = heap->attached_profiler != nullptr
                            ? heap->attached_profiler
                            : g_process_profiler.load(std::memory_order_acquire);
  if (user != nullptr && user_profiler_started(user)) {
    *owner = user;
    return user_profiler_interval(user);
  }
  if (g_session.enabled.load(std::memory_order_acquire)) {
    return __atomic_load_n(&g_session.interval, __ATOMIC_RELAXED);
  }
  return 0;
}

}  // namespace heapscope::prof

namespace heapscope {

using namespace prof;

// The heap's countdown went below zero with this allocation of `size` bytes. Returns true if
// the allocation is a sample; re-arms the countdown either way.
HS_TEXT bool sample_countdown_expired(Heap* heap, size_t size) {
  uint64_t generation = g_generation.load(std::memory_order_acquire);
  if (heap->prof_generation != generation) {
    // A session started or stopped (or a profiler was attached) since this heap last looked:
    // begin a fresh Poisson process here, this allocation included (its bytes were counted).
    heap->prof_generation = generation;
    heap->prof_interval = heap_interval(heap, &heap->prof_owner);
    if (heap->prof_interval == 0) {
      countdown_set(heap, idle_recheck_bytes(size));
      return false;
    }
    countdown_set(heap, draw_distance(heap->td, heap->prof_interval) - static_cast<int64_t>(size));
    if (heap->sample_countdown >= 0) return false;
  }
  if (heap->prof_interval == 0) {
    countdown_set(heap, idle_recheck_bytes(size));
    return false;
  }
  int64_t overshoot = heap->sample_countdown;
  int64_t carried = overshoot;
  // The leftover carries into the next distance. When an allocation spans many intervals,
  // the points inside it do not matter, and by memorylessness the distance from its end to
  // the next point is itself a fresh exponential: draw that instead of thousands of gaps.
  if (-overshoot > 4 * static_cast<int64_t>(heap->prof_interval)) {
    carried = draw_distance(heap->td, heap->prof_interval);
  } else {
    while (carried < 0) carried += draw_distance(heap->td, heap->prof_interval);
  }
  countdown_shift(heap, carried - overshoot);  // the leftover carries into the next distance
  heap->prof_bytes_since_sample = static_cast<uint64_t>(static_cast<int64_t>(size) - overshoot);
  return t_suppress == 0;
}

// A fresh heap looks at the session on its first allocation.
HS_HOT_TEXT void prof_heap_init(Heap* heap) {
  heap->prof_generation = 0;  // never current
  heap->sample_countdown = heap->countdown_armed = 0;
  heap->requested_folded = 0;
}

// The calling thread's heaps see a new session on their next allocation; other threads' within
// a MiB of allocation (their countdowns are theirs alone to write).
void prof_rearm_own_heaps() {
  Heap* own = tls_heap;
  if (own == &g_empty_heap) return;
  countdown_set(own, 0);
  for (Heap* user = own->td->user_heaps; user != nullptr; user = user->user_next) {
    countdown_set(user, 0);
  }
}

}  // namespace heapscope
