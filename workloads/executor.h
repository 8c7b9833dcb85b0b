// The op interpreter: what each worker thread runs. Two instantiations of one loop:
//
//   Mode::kTimed   allocator calls + the workload's own touches (first byte, one byte
//                  per 4 KiB page, last byte). Nothing else: no counters shared between
//                  threads, no harness allocation, no locks.
//   Mode::kLatency kTimed plus the open-loop schedule (harness/docs/protocol.md#latency): each op
//                  waits for its intended start, and completion - intended start goes into the
//                  worker's own histogram. A separate instantiation so kTimed is untouched.
//   Mode::kVerify  the same calls, untimed, writing a pattern derived from the slot's tag
//                  into every block and checking it before every free/realloc (and calloc
//                  zeroes, alignment, the realloc-preserved prefix, handoff contents).
#pragma once

#include <cstddef>
#include <cstdint>

#include "stats/log_linear_histogram.h"
#include "workloads/spsc_queue.h"
#include "workloads/stream.h"

namespace heapscope::workloads {

enum class Mode { kTimed, kLatency, kVerify };

// One worker's open-loop schedule and latency histogram; lives in mmap'd memory (the
// histogram is 58 KiB, so recording never touches the allocator under test).
struct LatencyRecorder {
  std::int64_t origin_ns = 0;  // the region's start: op k is due at origin + k * interval
  double interval_ns = 0;  // 0: unthrottled, each op due when the previous completed (closed loop)
  std::uint64_t issued = 0;  // ops scheduled so far
  std::int64_t last_done_ns = 0;
  // How early a sleeping worker asks to be woken: twice the running mean of how late the
  // scheduler has woken it so far (see wait_for_intended_start).
  std::int64_t wake_margin_ns = 50'000;
  std::int64_t mean_wake_delay_ns = 25'000;
  stats::LogLinearHistogram histogram;
};

// One worker's state; lives in mmap'd memory, one per cache-line-aligned slot.
struct alignas(64) WorkerState {
  const Stream* stream = nullptr;
  unsigned index = 0, threads = 1;
  QueueMatrix* queues = nullptr;   // cross-thread workloads only
  void** slots = nullptr;          // stream->slots entries (mmap'd)
  std::uint64_t* tags = nullptr;   // verify: tag of each slot's block
  std::uint64_t* sizes = nullptr;  // verify: size of each slot's block
  std::size_t cursor = 0;          // next op to run

  std::uint64_t expected_receives = 0;  // set before the timed pass starts
  std::uint64_t received = 0;
  std::uint64_t alloc_failures = 0;
  // Verify-pass findings, by kind (the child reports each; an allocator bug such as a
  // misaligned posix_memalign result must be named, not folded into "corruption").
  std::uint64_t verify_content = 0;     // a block's pattern changed while we held it
  std::uint64_t verify_misaligned = 0;  // posix_memalign result not aligned as asked
  std::uint64_t verify_not_zero = 0;    // calloc returned non-zero bytes
  std::uint64_t sent_tag_xor = 0, received_tag_xor = 0;  // verify: handoff contents
  std::uint64_t sink = 0;              // consumer reads land here so they are not elided
  std::uint64_t tag_counter = 0;       // verify: per-worker tag sequence
  LatencyRecorder* latency = nullptr;  // Mode::kLatency only
};

// The monotonic clock of the timed region and of the latency schedule (vDSO, ~20 ns).
std::int64_t monotonic_ns();

// Runs ops [state.cursor, end) or until a kGenerationEnd (which is consumed); returns
// true if it stopped at a generation end.
template <Mode kMode>
bool run_ops(WorkerState& state, std::size_t end);

// Cross-thread: frees from the inboxes until everything addressed to this worker has
// been received.
template <Mode kMode>
void final_drain(WorkerState& state);

extern template bool run_ops<Mode::kTimed>(WorkerState&, std::size_t);
extern template bool run_ops<Mode::kLatency>(WorkerState&, std::size_t);
extern template bool run_ops<Mode::kVerify>(WorkerState&, std::size_t);
extern template void final_drain<Mode::kTimed>(WorkerState&);
extern template void final_drain<Mode::kLatency>(WorkerState&);
extern template void final_drain<Mode::kVerify>(WorkerState&);

}  // namespace heapscope::workloads
