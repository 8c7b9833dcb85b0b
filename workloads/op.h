// One materialized operation: 8 bytes, so a calibrated stream of tens of millions of
// ops stays in the hundreds of MB, read sequentially by the timed loop.
//
//   bits  0..3   kind
//   bits  4..7   log2(alignment)             (kAligned)
//   bits  8..15  target worker (kSend) / max pops, 0 = all (kDrain)
//   bits 16..35  slot                        (per-worker slot table index, < 2^20)
//   bits 36..63  size in bytes               (< 2^28 = 256 MiB)
#pragma once

#include <cstdint>

namespace heapscope::workloads {

enum class OpKind : std::uint8_t {
  kMalloc = 1,         // slot = malloc(size), touch
  kFree = 2,           // free(slot)
  kRealloc = 3,        // slot = realloc(slot, size), touch
  kCalloc = 4,         // slot = calloc(1, size), touch
  kAligned = 5,        // posix_memalign(&slot, 1 << align_log2, size), touch
  kSend = 6,           // p = malloc(size), touch, push to target's inbox; the target frees it
  kDrain = 7,          // pop up to `target` (0 = all) blocks from own inboxes and free them
  kGenerationEnd = 8,  // thread-churn: this worker's thread exits; a fresh one continues
};

inline constexpr unsigned kMaxSlots = 1u << 20;
inline constexpr std::uint64_t kMaxSize = (1ull << 28) - 1;
inline constexpr unsigned kMaxThreads = 64;  // T*T handoff queues; also fits the 8-bit target

struct Op {
  std::uint64_t word;

  static constexpr Op make(OpKind kind, std::uint32_t slot, std::uint64_t size,
                           std::uint32_t target = 0, std::uint32_t align_log2 = 0) {
    return Op{static_cast<std::uint64_t>(kind) | (std::uint64_t{align_log2 & 0xf} << 4) |
              (std::uint64_t{target & 0xff} << 8) | (std::uint64_t{slot & 0xfffff} << 16) |
              ((size & kMaxSize) << 36)};
  }
  constexpr OpKind kind() const { return static_cast<OpKind>(word & 0xf); }
  constexpr unsigned align_log2() const { return (word >> 4) & 0xf; }
  constexpr unsigned target() const { return (word >> 8) & 0xff; }
  constexpr std::uint32_t slot() const { return (word >> 16) & 0xfffff; }
  constexpr std::uint64_t size() const { return word >> 36; }
};
static_assert(sizeof(Op) == 8);

}  // namespace heapscope::workloads
