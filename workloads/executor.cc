// Hot loop of every workload. Call tree:
//
//   run_ops<M>  -- switch over the 8-byte op --> malloc/calloc/realloc/posix_memalign/free
//     |                                          + touch (kTimed) or fill/check (kVerify)
//     +-- kSend  -> malloc, touch, push_blocking --(ring full)--> drain_inbox
//     +-- kDrain -> drain_inbox -> consume (read first byte / check) -> free
//   final_drain<M> -> drain_inbox until every block addressed here has arrived
#include "workloads/executor.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/splitmix64.h"

namespace heapscope::workloads {
namespace {

// Stands in for a block whose malloc failed, so the receiver's count still adds up.
char failed_block_marker;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spin briefly, then yield: oversubscribed cells (T > cores) must let the peer run.
struct Backoff {
  unsigned spins = 0;
  void wait() {
    if (++spins < 64) {
      cpu_relax();
    } else {
      sched_yield();
    }
  }
  void reset() { spins = 0; }
};

// The workload's own touch in the timed loop: one byte per 4 KiB page plus the last.
inline void touch(void* p, std::uint64_t size, unsigned char v) {
  auto* b = static_cast<volatile unsigned char*>(p);
  for (std::uint64_t off = 0; off < size; off += 4096) b[off] = v;
  b[size - 1] = v;
}

// ---- verify pass helpers (never run inside the timed loop) ----
inline unsigned char pattern(std::uint64_t tag, std::uint64_t i) {
  return static_cast<unsigned char>((tag >> ((i & 7) * 8)) ^ (i >> 3));
}
inline std::uint64_t stride_for(std::uint64_t size) { return size <= (64u << 10) ? 1 : 64; }

void fill(void* p, std::uint64_t size, std::uint64_t tag, std::uint64_t from = 0) {
  auto* b = static_cast<unsigned char*>(p);
  for (std::uint64_t i = from; i < size; i += stride_for(size)) b[i] = pattern(tag, i);
  if (size > from) b[size - 1] = pattern(tag, size - 1);
}

// Checks [from, n) of a block that was filled as a block of `filled` bytes (the
// realloc-preserved prefix of a larger block has n < filled).
bool check(const void* p, std::uint64_t n, std::uint64_t tag, std::uint64_t from,
           std::uint64_t filled) {
  const auto* b = static_cast<const unsigned char*>(p);
  const std::uint64_t stride = stride_for(filled);
  for (std::uint64_t i = from; i < n; i += stride)
    if (b[i] != pattern(tag, i)) return false;
  const bool last_written = n == filled || stride == 1;
  return n <= from || !last_written || b[n - 1] == pattern(tag, n - 1);
}

bool all_zero(const void* p, std::uint64_t size) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::uint64_t i = 0; i < size; ++i)
    if (b[i] != 0) return false;
  return true;
}

std::uint64_t next_tag(WorkerState& s, std::uint32_t slot) {
  return base::splitmix64_mix((std::uint64_t{s.index + 1} << 56) ^ (std::uint64_t{slot} << 28) ^
                              ++s.tag_counter);
}

template <Mode kMode>
inline void on_alloc(WorkerState& s, std::uint32_t slot, void* p, std::uint64_t size) {
  s.slots[slot] = p;
  if (p == nullptr) {
    ++s.alloc_failures;
    return;
  }
  if constexpr (kMode != Mode::kVerify) {
    touch(p, size, static_cast<unsigned char>(slot));
  } else {
    s.tags[slot] = next_tag(s, slot);
    s.sizes[slot] = size;
    fill(p, size, s.tags[slot]);
  }
}

template <Mode kMode>
inline void verify_before_free(WorkerState& s, std::uint32_t slot) {
  if constexpr (kMode == Mode::kVerify) {
    if (s.slots[slot] != nullptr &&
        !check(s.slots[slot], s.sizes[slot], s.tags[slot], 0, s.sizes[slot]))
      ++s.verify_content;
  }
}

// Handoff block layout in verify mode: [tag:8][size:4][pattern...] (sizes are >= 16).
template <Mode kMode>
inline void consume(WorkerState& s, void* p) {
  ++s.received;
  if (p == &failed_block_marker) return;
  if constexpr (kMode != Mode::kVerify) {
    s.sink += *static_cast<volatile unsigned char*>(p);
  } else {
    std::uint64_t tag;
    std::uint32_t size;
    std::memcpy(&tag, p, 8);
    std::memcpy(&size, static_cast<char*>(p) + 8, 4);
    if (size < 16 || !check(p, size, tag, 12, size)) ++s.verify_content;
    s.received_tag_xor ^= tag;
  }
  std::free(p);
}

template <Mode kMode>
std::uint64_t drain_inbox(WorkerState& s, unsigned max) {
  std::uint64_t n = 0;
  for (unsigned producer = 0; producer < s.threads; ++producer) {
    SpscRing& ring = s.queues->ring(producer, s.index);
    while (max == 0 || n < max) {
      void* p = ring.pop();
      if (p == nullptr) break;
      consume<kMode>(s, p);
      ++n;
    }
  }
  return n;
}

template <Mode kMode>
void send(WorkerState& s, const Op op) {
  const std::uint64_t size = op.size();
  void* p = std::malloc(size);
  if (p == nullptr) {
    ++s.alloc_failures;
    p = &failed_block_marker;
  } else if constexpr (kMode != Mode::kVerify) {
    touch(p, size, static_cast<unsigned char>(size));
  } else {
    const std::uint64_t tag = next_tag(s, op.target());
    const auto size32 = static_cast<std::uint32_t>(size);
    std::memcpy(p, &tag, 8);
    std::memcpy(static_cast<char*>(p) + 8, &size32, 4);
    fill(p, size, tag, 12);
    s.sent_tag_xor ^= tag;
  }
  SpscRing& ring = s.queues->ring(s.index, op.target());
  Backoff backoff;
  // A full ring: free what others sent us while waiting, so no cycle of full rings
  // can deadlock.
  while (!ring.push(p)) {
    if (drain_inbox<kMode>(s, 0) == 0) backoff.wait();
  }
}

// A worker far enough ahead of its schedule sleeps instead of spinning: a spinning worker
// is a CPU hog the scheduler preempts for whole time slices on a shared machine (and, with
// more workers than cores, it steals the CPU its peers need), and every such gap would be
// measured as latency. It must wake before the op is due, or the scheduler's wake-up delay
// (tens of microseconds on a virtual machine, even with the 1 ns timer slack of latency runs,
// see runner.cc) would be charged to every op as allocator latency. So it asks to be woken
// early by a margin learned from its own wake-ups (twice their running mean, within bounds),
// and spins the rest; it sleeps only when the op is due later than that margin plus a minimum.
constexpr std::int64_t kMinSleepNs = 10'000;
constexpr std::int64_t kMinWakeMarginNs = 5'000;
constexpr std::int64_t kMaxWakeMarginNs = 2'000'000;

void sleep_until(std::int64_t when_ns) {
  const timespec at{static_cast<time_t>(when_ns / 1'000'000'000),
                    static_cast<long>(when_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
}

// Open loop: op k is due at origin + k * interval whatever happened before it, so a stall
// delays (and is charged to) every op that was due during it: no coordinated omission.
// Returns the op's intended start. The previous op's completion time saves a clock read
// whenever the worker is already late.
inline std::int64_t wait_for_intended_start(LatencyRecorder& r) {
  // Unthrottled: each op is due the moment the previous one completed (one clock read per op).
  if (r.interval_ns == 0) return r.last_done_ns;
  const std::int64_t due =
      r.origin_ns + static_cast<std::int64_t>(static_cast<double>(r.issued) * r.interval_ns);
  if (r.last_done_ns < due) {
    std::int64_t now = monotonic_ns();
    if (due - now > r.wake_margin_ns + kMinSleepNs) {
      const std::int64_t wake_at = due - r.wake_margin_ns;
      sleep_until(wake_at);
      now = monotonic_ns();
      r.mean_wake_delay_ns += (now - wake_at - r.mean_wake_delay_ns) / 8;
      r.wake_margin_ns = std::clamp(2 * r.mean_wake_delay_ns, kMinWakeMarginNs, kMaxWakeMarginNs);
    }
    while (now < due) {
      cpu_relax();
      now = monotonic_ns();
    }
  }
  return due;
}

inline void record_completion(LatencyRecorder& r, std::int64_t intended) {
  const std::int64_t done = monotonic_ns();
  r.histogram.record(done > intended ? static_cast<std::uint64_t>(done - intended) : 0);
  r.last_done_ns = done;
  ++r.issued;
}

}  // namespace

std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

template <Mode kMode>
bool run_ops(WorkerState& s, std::size_t end) {
  const Op* ops = s.stream->ops;
  void** slots = s.slots;
  for (std::size_t i = s.cursor; i < end; ++i) {
    const Op op = ops[i];
    const std::uint32_t slot = op.slot();
    [[maybe_unused]] std::int64_t intended = 0;
    if constexpr (kMode == Mode::kLatency) {
      if (op.kind() != OpKind::kGenerationEnd) intended = wait_for_intended_start(*s.latency);
    }
    switch (op.kind()) {
      case OpKind::kMalloc:
        on_alloc<kMode>(s, slot, std::malloc(op.size()), op.size());
        break;
      case OpKind::kFree:
        verify_before_free<kMode>(s, slot);
        std::free(slots[slot]);
        slots[slot] = nullptr;
        break;
      case OpKind::kRealloc: {
        verify_before_free<kMode>(s, slot);
        const bool had_block = slots[slot] != nullptr;
        void* q = std::realloc(slots[slot], op.size());
        if (q == nullptr) {
          ++s.alloc_failures;  // the old block is still valid and stays in the slot
          break;
        }
        if constexpr (kMode == Mode::kVerify) {
          if (had_block) {
            const std::uint64_t old = s.sizes[slot];
            const std::uint64_t keep = old < op.size() ? old : op.size();
            if (!check(q, keep, s.tags[slot], 0, old)) ++s.verify_content;
          } else {
            s.tags[slot] = next_tag(s, slot);
          }
          s.sizes[slot] = op.size();
          fill(q, op.size(), s.tags[slot]);
          slots[slot] = q;
        } else {
          slots[slot] = q;
          touch(q, op.size(), static_cast<unsigned char>(slot));
        }
        break;
      }
      case OpKind::kCalloc: {
        void* p = std::calloc(1, op.size());
        if constexpr (kMode == Mode::kVerify) {
          if (p != nullptr && !all_zero(p, op.size())) ++s.verify_not_zero;
        }
        on_alloc<kMode>(s, slot, p, op.size());
        break;
      }
      case OpKind::kAligned: {
        void* p = nullptr;
        const std::size_t align = std::size_t{1} << op.align_log2();
        if (posix_memalign(&p, align, op.size()) != 0) p = nullptr;
        if constexpr (kMode == Mode::kVerify) {
          if (p != nullptr && reinterpret_cast<std::uintptr_t>(p) % align != 0)
            ++s.verify_misaligned;
        }
        on_alloc<kMode>(s, slot, p, op.size());
        break;
      }
      case OpKind::kSend:
        send<kMode>(s, op);
        break;
      case OpKind::kDrain:
        drain_inbox<kMode>(s, op.target());
        break;
      case OpKind::kGenerationEnd:
        s.cursor = i + 1;
        return true;
    }
    if constexpr (kMode == Mode::kLatency) record_completion(*s.latency, intended);
  }
  s.cursor = end;
  return false;
}

template <Mode kMode>
void final_drain(WorkerState& s) {
  Backoff backoff;
  while (s.received < s.expected_receives) {
    if (drain_inbox<kMode>(s, 0) == 0) {
      backoff.wait();
    } else {
      backoff.reset();
    }
  }
}

template bool run_ops<Mode::kTimed>(WorkerState&, std::size_t);
template bool run_ops<Mode::kLatency>(WorkerState&, std::size_t);
template bool run_ops<Mode::kVerify>(WorkerState&, std::size_t);
template void final_drain<Mode::kTimed>(WorkerState&);
template void final_drain<Mode::kLatency>(WorkerState&);
template void final_drain<Mode::kVerify>(WorkerState&);

}  // namespace heapscope::workloads
