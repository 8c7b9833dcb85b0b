// Thread choreography around the timed region.
//
//   main                                   worker i (pthread, created before timing)
//   materialize streams (threads, untimed)
//   spawn workers ───────────────────────> setup ops (untimed), barrier `ready`
//   barrier `ready`                        spin on `start`
//   markers.begin(); t0; start = 1 ──────> timed ops [+ final drain]; end_i = now
//   barrier `done` <───────────────────── barrier `done`
//   markers.end(); barrier `release` ────> teardown ops (untimed), exit
//   seconds = max(end_i) - t0
//
// thread-churn instead: gen-0 workers exit at their first generation end; main joins
// them and spawns each next generation itself, inside the region; teardown on main.
#include "workloads/runner.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

#include "base/fnv1a.h"
#include "base/splitmix64.h"
#include "workloads/executor.h"
#include "workloads/fatal.h"
#include "workloads/live_bytes.h"
#include "workloads/seed_chain.h"

namespace heapscope::workloads {
namespace {

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Everything the pass shares between threads; lives in one mmap'd region.
struct alignas(64) Shared {
  std::atomic<int> start{0};
  pthread_barrier_t ready, done, release;
  Topology topology;
  bool plant = false;
  std::int64_t origin_ns = 0;  // the region's start, written before `start` is released
  WorkerState* workers = nullptr;
};
struct alignas(64) WorkerSlot {  // per-thread arguments and results, no false sharing
  Shared* shared;
  unsigned index;
  bool first_generation;
  pthread_t thread;
  std::int64_t end_ns;
};

void wait_for_start(const Shared& sh) {
  unsigned spins = 0;
  while (sh.start.load(std::memory_order_acquire) == 0) {
    if (++spins > 64) sched_yield();
  }
}

// Setup and teardown ops are outside the region: in a latency pass they run untimed, like in
// a plain timed pass, so only the region's ops are scheduled and recorded.
template <Mode kMode>
inline constexpr Mode kOutsideRegion = kMode == Mode::kLatency ? Mode::kTimed : kMode;

// The latency schedule starts with the region, for every worker at the same instant.
template <Mode kMode>
void start_schedule(const Shared& sh, WorkerState& s) {
  if constexpr (kMode == Mode::kLatency) {
    s.latency->origin_ns = sh.origin_ns;
    s.latency->last_done_ns = sh.origin_ns;
  }
}

// Deliberately allocates inside the timed region (positive control for the audit).
__attribute__((noinline)) void planted_harness_allocation() {
  void* volatile p = std::malloc(32);
  std::free(p);
}

template <Mode kMode>
void* worker_main(void* arg) {
  auto& slot = *static_cast<WorkerSlot*>(arg);
  Shared& sh = *slot.shared;
  WorkerState& s = sh.workers[slot.index];
  run_ops<kOutsideRegion<kMode>>(s, s.stream->timed_begin);  // setup
  pthread_barrier_wait(&sh.ready);
  wait_for_start(sh);
  start_schedule<kMode>(sh, s);
  if (sh.plant && slot.index == 0) planted_harness_allocation();
  run_ops<kMode>(s, s.stream->timed_end);
  if (sh.topology == Topology::kCrossThread) final_drain<kMode>(s);
  slot.end_ns = now_ns();
  pthread_barrier_wait(&sh.done);
  pthread_barrier_wait(&sh.release);
  run_ops<kOutsideRegion<kMode>>(s, s.stream->size);  // teardown
  return nullptr;
}

template <Mode kMode>
void* churn_main(void* arg) {
  auto& slot = *static_cast<WorkerSlot*>(arg);
  Shared& sh = *slot.shared;
  WorkerState& s = sh.workers[slot.index];
  if (slot.first_generation) {
    run_ops<kOutsideRegion<kMode>>(s, s.stream->timed_begin);
    pthread_barrier_wait(&sh.ready);
    wait_for_start(sh);
    start_schedule<kMode>(sh, s);
    if (sh.plant && slot.index == 0) planted_harness_allocation();
  }
  run_ops<kMode>(s, s.stream->timed_end);  // stops at this generation's end
  return nullptr;
}

void spawn(WorkerSlot& slot, void* (*fn)(void*)) {
  HS_WL_CHECK(pthread_create(&slot.thread, nullptr, fn, &slot) == 0, "pthread_create failed");
}

struct PassOutcome {
  double seconds;
  unsigned threads_created_in_region;
};

template <Mode kMode>
PassOutcome run_pass(Shared& sh, WorkerSlot* slots, unsigned threads,
                     const RegionMarkers& markers) {
  const bool audit = kMode != Mode::kVerify && markers.present();
  sh.start.store(0, std::memory_order_relaxed);
  pthread_barrier_init(&sh.ready, nullptr, threads + 1);
  pthread_barrier_init(&sh.done, nullptr, threads + 1);
  pthread_barrier_init(&sh.release, nullptr, threads + 1);
  const bool churn = sh.topology == Topology::kChurn;
  for (unsigned w = 0; w < threads; ++w) {
    slots[w].first_generation = true;
    spawn(slots[w], churn ? churn_main<kMode> : worker_main<kMode>);
  }
  pthread_barrier_wait(&sh.ready);
  if (audit) markers.begin();
  const std::int64_t t0 = now_ns();
  sh.origin_ns = t0;
  sh.start.store(1, std::memory_order_release);

  PassOutcome out{0.0, 0};
  std::int64_t t1 = t0;
  if (!churn) {
    pthread_barrier_wait(&sh.done);
    if (audit) markers.end();
    for (unsigned w = 0; w < threads; ++w) t1 = std::max(t1, slots[w].end_ns);
    pthread_barrier_wait(&sh.release);
    for (unsigned w = 0; w < threads; ++w) pthread_join(slots[w].thread, nullptr);
  } else {
    for (unsigned w = 0; w < threads; ++w) pthread_join(slots[w].thread, nullptr);
    while (sh.workers[0].cursor < sh.workers[0].stream->timed_end) {
      for (unsigned w = 0; w < threads; ++w) {
        slots[w].first_generation = false;
        spawn(slots[w], churn_main<kMode>);
      }
      for (unsigned w = 0; w < threads; ++w) pthread_join(slots[w].thread, nullptr);
      out.threads_created_in_region += threads;
    }
    t1 = now_ns();
    if (audit) markers.end();
    // Teardown on main: frees what the last generation left, untimed.
    for (unsigned w = 0; w < threads; ++w)
      run_ops<kOutsideRegion<kMode>>(sh.workers[w], sh.workers[w].stream->size);
  }
  pthread_barrier_destroy(&sh.ready);
  pthread_barrier_destroy(&sh.done);
  pthread_barrier_destroy(&sh.release);
  out.seconds = static_cast<double>(t1 - t0) * 1e-9;
  return out;
}

std::uint64_t combine_digests(std::string_view workload, unsigned threads,
                              const std::vector<Stream>& streams) {
  std::uint64_t h = base::splitmix64_mix(base::fnv1a64(workload) ^ threads);
  for (const Stream& s : streams) h = base::splitmix64_mix(h ^ stream_digest(s));
  return h;
}

}  // namespace

Materialized materialize(const WorkloadSpec& spec, unsigned threads, std::uint64_t ops,
                         std::uint64_t seed, std::uint64_t block) {
  Materialized m;
  m.streams.resize(threads);
  m.seeds.resize(threads);
  // One generator thread per worker: streams of tens of millions of ops build in parallel.
  std::vector<std::thread> gens;
  for (unsigned w = 0; w < threads; ++w) {
    m.seeds[w] = stream_seed(seed, spec.name, threads, block, w);
    gens.emplace_back([&, w] {
      base::SplitMix64 rng(m.seeds[w]);
      StreamWriter writer(spec.capacity(ops, threads), threads);
      GenContext ctx{rng, w, threads, ops, writer};
      spec.generate(ctx);
      m.streams[w] = writer.finish();
    });
  }
  for (auto& t : gens) t.join();
  m.digest = combine_digests(spec.name, threads, m.streams);
  for (const Stream& s : m.streams) {
    m.calls.malloc += s.timed_calls.malloc;
    m.calls.free += s.timed_calls.free;
    m.calls.realloc += s.timed_calls.realloc;
    m.calls.calloc += s.timed_calls.calloc;
    m.calls.aligned += s.timed_calls.aligned;
    for (const auto n : s.sends_to) m.calls.free += n;  // freed by the receiver
  }
  return m;
}

RunResult run_workload(const RunConfig& cfg) {
  RunResult r;
  if (cfg.spec == nullptr) return r.error = "no workload", r;
  if (cfg.threads < 1 || cfg.threads > kMaxThreads)
    return r.error = "threads must be in [1, " + std::to_string(kMaxThreads) + "]", r;
  if (cfg.ops < 1) return r.error = "ops must be >= 1", r;

  const unsigned T = cfg.threads;
  Materialized m = materialize(*cfg.spec, T, cfg.ops, cfg.seed, cfg.block);
  r.digest = m.digest;
  r.worker_seeds = m.seeds;
  r.calls = m.calls;
  for (const Stream& s : m.streams) r.stream_bytes += s.size * sizeof(Op);
  r.peak_live_bytes = peak_live_bytes(m.streams);

  // Harness state next to the timed loop: all mmap'd and pre-faulted.
  MmapRegion shared_region =
      MmapRegion::map(sizeof(Shared) + T * (sizeof(WorkerSlot) + sizeof(WorkerState)),
                      MmapRegion::Commit::kPopulate);
  if (shared_region.data() == nullptr) return r.error = "cannot mmap harness state", r;
  auto* sh = new (shared_region.data()) Shared();
  auto* slots = reinterpret_cast<WorkerSlot*>(shared_region.as<char>() + sizeof(Shared));
  sh->workers =
      reinterpret_cast<WorkerState*>(reinterpret_cast<char*>(slots) + T * sizeof(WorkerSlot));
  sh->topology = cfg.spec->topology;
  sh->plant = cfg.plant_harness_alloc;

  QueueMatrix queues;
  if (cfg.spec->topology == Topology::kCrossThread && !queues.init(T, cfg.spec->queue_capacity))
    return r.error = "cannot mmap handoff queues", r;
  std::vector<MmapRegion> tables(T);
  for (unsigned w = 0; w < T; ++w) {
    const std::size_t n = m.streams[w].slots;
    tables[w] = MmapRegion::map(n * (sizeof(void*) + 2 * sizeof(std::uint64_t)),
                                MmapRegion::Commit::kPopulate);
    if (n != 0 && tables[w].data() == nullptr) return r.error = "cannot mmap slot tables", r;
    new (&slots[w]) WorkerSlot{sh, w, true, {}, 0};
  }
  auto reset_workers = [&] {
    for (unsigned w = 0; w < T; ++w) {
      WorkerState* s = new (&sh->workers[w]) WorkerState();
      s->stream = &m.streams[w];
      s->index = w;
      s->threads = T;
      s->queues = &queues;
      s->slots = tables[w].as<void*>();
      s->tags = reinterpret_cast<std::uint64_t*>(s->slots + m.streams[w].slots);
      s->sizes = s->tags + m.streams[w].slots;
      for (unsigned p = 0; p < T; ++p) s->expected_receives += m.streams[p].sends_to[w];
    }
  };

  // Latency: one recorder per worker, mmap'd like the rest of the harness state.
  MmapRegion latency_region;
  if (cfg.latency_rate) {
    if (!(*cfg.latency_rate >= 0)) return r.error = "latency rate must be >= 0", r;
    latency_region = MmapRegion::map(T * sizeof(LatencyRecorder), MmapRegion::Commit::kPopulate);
    if (latency_region.data() == nullptr) return r.error = "cannot mmap latency histograms", r;
  }
  auto* recorders = latency_region.as<LatencyRecorder>();
  const RegionMarkers markers = RegionMarkers::lookup();
  reset_workers();
  if (cfg.latency_rate) {
    // Workers sleep while ahead of schedule (executor.cc): 1 ns timer slack (inherited by the
    // threads created below) lets them wake on time instead of up to 50 us late.
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    for (unsigned w = 0; w < T; ++w) {
      auto* rec = new (&recorders[w]) LatencyRecorder();
      rec->interval_ns = *cfg.latency_rate > 0 ? 1e9 * T / *cfg.latency_rate : 0;
      sh->workers[w].latency = rec;
    }
  }
  if (cfg.handshake != nullptr && !cfg.handshake->exchange("replay", "go")) {
    r.handshake_failed = true;
    return r.error = "memory handshake: the parent did not answer \"go\"", r;
  }
  const PassOutcome timed = cfg.latency_rate ? run_pass<Mode::kLatency>(*sh, slots, T, markers)
                                             : run_pass<Mode::kTimed>(*sh, slots, T, markers);
  if (cfg.latency_rate) {
    r.latency.emplace();
    for (unsigned w = 0; w < T; ++w) r.latency->merge(recorders[w].histogram);
  }
  r.seconds = timed.seconds;
  r.threads_created_in_region = timed.threads_created_in_region;
  for (unsigned w = 0; w < T; ++w) r.alloc_failures += sh->workers[w].alloc_failures;
  if (markers.present()) {
    hs_shim_counts c{};
    markers.read(&c);
    r.shim = c;
  }

  if (cfg.verify) {
    reset_workers();
    sh->plant = false;
    run_pass<Mode::kVerify>(*sh, slots, T, markers);
    std::uint64_t sent = 0, received = 0;
    for (unsigned w = 0; w < T; ++w) {
      const WorkerState& s = sh->workers[w];
      r.verify.content += s.verify_content;
      r.verify.misaligned += s.verify_misaligned;
      r.verify.calloc_not_zero += s.verify_not_zero;
      sent ^= s.sent_tag_xor;
      received ^= s.received_tag_xor;
      for (std::uint32_t i = 0; i < m.streams[w].slots; ++i)
        if (s.slots[i] != nullptr) ++r.verify.leaked;
    }
    if (sent != received) ++r.verify.handoff_mismatch;
    r.verified = true;
  }
  sh->~Shared();
  // Every block is freed by now (teardown ops); the parent reads the return points while
  // the child waits here.
  if (cfg.handshake != nullptr && !cfg.handshake->exchange("drained", "exit"))
    r.handshake_failed = true;
  return r;
}

}  // namespace heapscope::workloads
