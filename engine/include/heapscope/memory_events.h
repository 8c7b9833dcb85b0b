// heapscope engine: memory events — exact allocation accounting and change callbacks.
//
// Compile-time opt-in. The library built with the events compiled in (libheapscope_events.so)
// carries the hook sites; every other library compiles them out, and there every function
// below links but reports the subsystem off: hs_memory_events_available() is false,
// hs_memory_events_set_enabled() returns false and changes nothing, snapshot/visit/callback
// installation return false. (hs_unwrapped_* work in every build: they are plain OS memory.)
//
// With the events compiled in, tracking stays off until hs_memory_events_set_enabled(true) or
// HEAPSCOPE_MEMORY_EVENTS=1 at process start. While it is off a hook site costs one load and a
// predicted branch.
//
// What is counted: blocks allocated while tracking is on ("tracked blocks"), each with its
// usable size. Enabling starts a new tracking period: live bytes and count restart at zero
// (accumulated totals and the peak carry over). A block allocated while tracking was off, or
// in an earlier period, is unknown to the counters: freeing it produces nothing, so live
// figures never go below zero. Frees while tracking is off are not seen.
//
// Event rules (counters are updated first, then the callback of the kind runs):
//   allocation that succeeds        ALLOCATE  delta = +usable, request_size = request
//   free of a tracked block         FREE      delta = -usable, request_size = 0
//   realloc/expand of a tracked block that succeeds: exactly one RESIZE, delta = usable after
//                                   minus usable before (0 when the block kept its size; a
//                                   large block grown without moving has a positive delta),
//                                   request_size = new size; a moving realloc's internal
//                                   allocation and free are neither counted nor dispatched
//   realloc/expand of an untracked block that succeeds: ALLOCATE of the result
//   realloc(p, 0)                   FREE (when p is tracked)
//   failed allocation or realloc, double free, foreign pointer: nothing
//   hs_heap_destroy                 one FREE per tracked block the heap still held
// total_bytes is the live byte count right after the operation. Allocations and frees made by a
// callback (on the thread running it) are neither counted nor dispatched, so a callback may
// allocate without recursion or deadlock.
//
// Environment:
//   HEAPSCOPE_MEMORY_EVENTS=1          enable tracking at process start (0: leave it off)
//   HEAPSCOPE_MEMORY_SUMMARY=path      at exit, write a JSON summary (peak live bytes, totals,
//                                      short-lived allocations, size histogram); "%p" in the
//                                      path becomes the process id. Needs tracking on.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapscope/heapscope.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hs_memory_change_kind_e {
  HS_MEMORY_ALLOCATE = 0,
  HS_MEMORY_FREE = 1,
  HS_MEMORY_RESIZE = 2,
  HS_MEMORY_CHANGE_KINDS = 3
} hs_memory_change_kind_t;

typedef struct hs_memory_change_s {
  hs_memory_change_kind_t kind;
  void* address;          // the block after the operation (for FREE: the block that was freed)
  uint64_t total_bytes;   // live bytes right after this operation
  int64_t delta_bytes;    // change of live bytes by this operation
  uint64_t request_size;  // bytes asked for (ALLOCATE, RESIZE); 0 for FREE
} hs_memory_change_t;

// Called on the thread that made the change, after the counters include it. Must not call
// hs_memory_events_set_callback for its own kind expecting to wait for itself (it does not wait
// for its own thread).
typedef void hs_memory_change_fn(const hs_memory_change_t* change, void* arg);

// Request sizes are histogrammed by bit length: bucket 0 holds size 0, bucket i (1..46) sizes
// in [2^(i-1), 2^i), bucket 47 everything from 2^46 up.
#define HS_MEMORY_HISTOGRAM_BUCKETS 48
#define HS_MEMORY_SNAPSHOT_VERSION 1

typedef struct hs_memory_snapshot_s {
  size_t size;  // set to sizeof(hs_memory_snapshot_t) before the call
  int version;  // set to HS_MEMORY_SNAPSHOT_VERSION before the call
  bool enabled;
  uint64_t live_bytes;         // usable bytes of tracked live blocks
  uint64_t live_count;         // tracked live blocks
  uint64_t accum_bytes;        // bytes allocated while tracking (plus growth by resize)
  uint64_t accum_count;        // allocations while tracking
  uint64_t peak_live_bytes;    // the highest live_bytes reached
  uint64_t peak_time_ms;       // when (milliseconds since tracking was first enabled)
  uint64_t short_lived_count;  // freed before any other allocation happened in the process
  uint64_t size_histogram[HS_MEMORY_HISTOGRAM_BUCKETS];  // allocations by request size
} hs_memory_snapshot_t;

// Whether this library was built with the events compiled in.
HS_API bool hs_memory_events_available(void);
// Turns tracking on or off; returns the previous state (always false when not available).
HS_API bool hs_memory_events_set_enabled(bool enabled);
HS_API bool hs_memory_events_enabled(void);
// Fills *out (size and version must match this header); false when not available or on a
// size/version mismatch. The figures are one consistent cut.
HS_API bool hs_memory_events_snapshot(hs_memory_snapshot_t* out);
// Installs (fn non-NULL) or clears (fn NULL) the callback of one kind with its caller-owned
// argument, replacing the previous pair. When it returns, no other thread is still running the
// previous pair, so the previous argument may be released. False when not available or for an
// unknown kind.
HS_API bool hs_memory_events_set_callback(hs_memory_change_kind_t kind, hs_memory_change_fn* fn,
                                          void* arg);

// Visits every tracked live block of every thread (address, usable size); returning false
// stops the walk. Blocks freed or allocated concurrently may or may not be seen; a block being
// moved by a concurrent realloc is not seen. The visitor may allocate (untracked) but must not
// free a tracked block. False when not available, fn is NULL, or called from a callback.
typedef bool hs_memory_visit_fn(void* address, size_t usable_size, void* arg);
HS_API bool hs_memory_events_visit(hs_memory_visit_fn* fn, void* arg);

// Memory straight from the OS, never counted and never mixable with hs_free/free: for tools
// that must not recurse into the allocator. alignment 0 means pointer size; a non-power of two
// returns NULL. realloc(NULL, n) allocates, realloc(p, 0) frees and returns NULL.
HS_API void* hs_unwrapped_malloc(size_t size, size_t alignment);
HS_API void hs_unwrapped_free(void* p);
HS_API void* hs_unwrapped_realloc(void* p, size_t size, size_t alignment);

#ifdef __cplusplus
}  // extern "C"
#endif
