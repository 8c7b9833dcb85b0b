// A worker's materialized op stream: written once before timing into an mmap'd
// buffer, then read sequentially by the executor.
//
//   [0, timed_begin)          setup    (untimed; e.g. the long-lived heap's live set)
//   [timed_begin, timed_end)  timed
//   [timed_end, size)         teardown (untimed; frees what is still live)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "workloads/mmap_region.h"
#include "workloads/op.h"

namespace heapscope::workloads {

// Allocator calls, by kind. For a timed section: exactly the calls the timed loop makes
// (a kSend counts one malloc here and one free at its target).
struct CallCounts {
  std::uint64_t malloc = 0, free = 0, realloc = 0, calloc = 0, aligned = 0;
  std::uint64_t total() const { return malloc + free + realloc + calloc + aligned; }
  bool operator==(const CallCounts&) const = default;
};

struct Stream {
  MmapRegion storage;
  const Op* ops = nullptr;
  std::size_t size = 0, timed_begin = 0, timed_end = 0;
  std::uint32_t slots = 0;              // slot table size the executor must provide
  CallCounts timed_calls;               // this worker's own timed calls, remote frees excluded
  std::vector<std::uint32_t> sends_to;  // timed kSend count per target worker
  std::uint64_t sent_bytes = 0;
};

class StreamWriter {
 public:
  // capacity is an upper bound on ops; only the pages written are committed.
  StreamWriter(std::size_t capacity, unsigned threads);

  void emit(Op op);
  void begin_timed();
  void end_timed();
  // Calls emitted in the timed section so far, a kSend counting 2 (its remote free).
  std::uint64_t timed_cost() const { return cost_; }
  bool in_timed() const { return timed_; }
  Stream finish();

 private:
  Stream s_;
  Op* out_;
  std::size_t capacity_;
  bool timed_ = false;
  std::uint64_t cost_ = 0;
};

// "heapscope-stream-digest-v1": four lanes, lane = rotl(lane + word * M1, 31) * G over
// the 64-bit op words (word i into lane i % 4), folded with the splitmix64 output
// function together with size, timed_begin and timed_end. Bit-exact across machines.
std::uint64_t stream_digest(const Stream& s);

}  // namespace heapscope::workloads
