// Constants, attribute macros and the non-allocating fatal-error path shared by the engine.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "platform/code_placement.h"

#define HS_LIKELY(x) __builtin_expect(!!(x), 1)
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HS_ALWAYS_INLINE inline __attribute__((always_inline))
#define HS_NOINLINE __attribute__((noinline))
#define HS_COLD __attribute__((cold, noinline))
#define HS_INTERNAL __attribute__((visibility("hidden")))
// Every function that can be on the stack between a program's call into the allocator and a
// profiler sample lives in this section, so the stack walk knows which frames are ours.
#define HS_TEXT __attribute__((section("hs_text")))

#ifndef HS_PROFILER
#define HS_PROFILER 1
#endif
#ifndef HS_DEBUG
#define HS_DEBUG 0
#endif

namespace heapscope {

// ---- memory layout (see docs/allocator.md) -------------------------------------------------
inline constexpr size_t kSliceShift = 16;  // 64 KiB slices
inline constexpr size_t kSliceSize = size_t{1} << kSliceShift;
inline constexpr size_t kSegmentShift = 25;  // 32 MiB segments, aligned to their size
inline constexpr size_t kSegmentSize = size_t{1} << kSegmentShift;
inline constexpr size_t kSegmentMask = kSegmentSize - 1;
inline constexpr size_t kSlicesPerSegment = kSegmentSize / kSliceSize;  // 512 (slice_map.h)
inline constexpr size_t kHeaderSlices = 2;        // slices 0-1 hold the segment header
inline constexpr uint32_t kMaxSpareSegments = 1;  // per thread: empty segments kept mapped

inline constexpr size_t kMinAlign = 16;          // every block is 16-byte aligned
inline constexpr size_t kSmallDirectMax = 2048;  // sizes served by the direct table
inline constexpr size_t kDirectSlots = kSmallDirectMax / kMinAlign + 1;
inline constexpr size_t kSmallBlockMax = 8 * 1024;    // blocks on one-slice pages
inline constexpr size_t kMediumBlockMax = 64 * 1024;  // blocks on four-slice pages
// Above the small table, every class up to kMediumBlockMax is a multiple of 256 bytes, so a
// second table indexed by (size+255)/256 finds those pages without computing the class.
inline constexpr size_t kMediumDirectStep = 256;
inline constexpr size_t kMediumDirectSlots = kMediumBlockMax / kMediumDirectStep + 1;
// 256 KiB: a class with a few blocks live holds no more of a segment than that (docs/
// allocator.md, "Medium pages"); every medium class fits at most 12.5% slack (56 KiB: 4 blocks).
inline constexpr size_t kMediumPageSlices = 4;
// realloc moving a block that grows to at least this size (up to kMediumBlockMax) puts it on a
// slice of its own, where it can keep growing without copies (at most 2x the address space).
inline constexpr size_t kGrowthSpanMin = 32 * 1024;
// From this mean sample interval up, a sampled block of up to kSampleOwnPageMaxSize gets a page
// of its own (malloc_generic.cc, malloc_sampled): at most 4 KiB of extra memory per 64 KiB
// allocated.
inline constexpr size_t kSampleOwnPageMinInterval = 64 * 1024;
inline constexpr size_t kSampleOwnPageMaxSize = 512;
inline constexpr size_t kLargeMax = 16 * 1024 * 1024;  // the largest size class
// Beyond this: a dedicated mapping (huge block). Buffers of a few MiB and more then share one
// process-wide cache of freed mappings, whatever their sizes (huge.cc); as spans they filled
// an eighth or more of a segment each and fragmented the segments' free room, so buffers of
// varying sizes kept faulting fresh slices in. The size classes above it go unused.
inline constexpr size_t kHugeMin = 4 * 1024 * 1024;
inline constexpr size_t kHugeBlockOffset = kSliceSize;  // huge block: after fields + pages[0]
inline constexpr size_t kMaxAllocSize = PTRDIFF_MAX - 2 * kSegmentSize;
inline constexpr size_t kNaturalAlignMax = kSliceSize;  // page areas are slice aligned

// A free block: its first word links it to the next free block of its list. Read and write it
// through block_next/block_set_next (core/hardening.h): the hardened build stores it encoded.
struct Block {
  uintptr_t link;
};

// Formats `message` (and an optional pointer) into a stack buffer, writes it to stderr and
// aborts. Never allocates.
[[noreturn]] HS_COLD void fatal(const char* message, const void* ptr = nullptr);
// Writes a warning when the verbose option is set. Never allocates.
HS_COLD void warning(const char* message, const void* ptr = nullptr);

}  // namespace heapscope
