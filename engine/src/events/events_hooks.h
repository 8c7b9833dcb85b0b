// Where core meets memory events: the only header core includes from events/. With
// HS_MEMORY_EVENTS 0 every hook is a constant false or an empty inline function, so the hook
// sites compile to nothing. With it on, the malloc and free fast paths test no gate at all (the
// direct tables and the segment map send tracked calls to the generic paths: see
// events/tracking_state.cc), and the other hook sites cost one load of the gate and a
// predicted branch while tracking is off.
//
// The tracked entry points (events/accounting.cc) call back into the same core functions with
// the thread's nesting depth raised, so the hook sites let those inner calls straight through:
// a moving realloc's internal allocation and free, and everything a callback does, are neither
// counted nor dispatched.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/common.h"
#include "platform/thread_local.h"

#ifndef HS_MEMORY_EVENTS
#define HS_MEMORY_EVENTS 0
#endif

namespace heapscope {

struct Heap;

#if HS_MEMORY_EVENTS
// Nonzero while tracking is on (written under the tracking locks, read relaxed on the fast path).
extern uint8_t g_events_gate;
// Greater than zero while this thread is inside tracked code (a tracked entry point's inner
// call, a callback, a visitor): its allocator traffic is then neither counted nor dispatched.
HS_THREAD_LOCAL_EXTERN(uint32_t, tls_events_depth);

HS_ALWAYS_INLINE bool events_gate_open() {
#if defined(__SANITIZE_THREAD__)
  return HS_UNLIKELY(__atomic_load_n(&g_events_gate, __ATOMIC_RELAXED) != 0);
#else
  // A plain byte load, which on x86-64 is what the relaxed atomic load compiles to, but which the
  // compiler folds into one compare with memory (the atomic builtin costs an extra lea + load).
  // A stale read only delays the switch by a call; the tracked paths re-check under a lock.
  return HS_UNLIKELY(g_events_gate != 0);
#endif
}
// Whether this call is to be tracked: tracking on and not nested inside tracked code.
HS_ALWAYS_INLINE bool events_intercept() { return events_gate_open() && tls_events_depth == 0; }

// The switch's handshake with the diverted fast paths (a Dekker pair): the thread switching
// tracking stores the gate and then rewrites the direct tables and segment-map tags; a thread
// writing a slot or a map entry stores it and then reads the gate. A sync point between the
// store and the rest on both sides makes one of them see the other: both do a read-modify-write
// of this one word, so whichever comes second synchronizes with the first. (A fence would do
// on the hardware, but GCC's ThreadSanitizer rejects atomic_thread_fence.)
extern std::atomic<uint32_t> g_events_sync;
HS_ALWAYS_INLINE void events_sync_point() { g_events_sync.fetch_add(1, std::memory_order_acq_rel); }

void* events_malloc(Heap* heap, size_t size);
void* events_malloc_aligned(Heap* heap, size_t size, size_t alignment);
void* events_zalloc_aligned(Heap* heap, size_t size, size_t alignment);
void* events_realloc(Heap* heap, void* p, size_t new_size, size_t alignment, bool zero);
void* events_expand(void* p, size_t new_size);
void events_free(void* p);
void events_heap_destroy(Heap* heap);  // before the heap's pages go: its tracked blocks die
void events_process_init();            // HEAPSCOPE_MEMORY_EVENTS / HEAPSCOPE_MEMORY_SUMMARY
void events_fork(int phase);           // 0 before fork, 1 in the parent after, 2 in the child after
#else
constexpr bool events_gate_open() { return false; }
constexpr bool events_intercept() { return false; }
inline void* events_malloc(Heap*, size_t) { return nullptr; }
inline void* events_malloc_aligned(Heap*, size_t, size_t) { return nullptr; }
inline void* events_zalloc_aligned(Heap*, size_t, size_t) { return nullptr; }
inline void* events_realloc(Heap*, void*, size_t, size_t, bool) { return nullptr; }
inline void* events_expand(void*, size_t) { return nullptr; }
inline void events_free(void*) {}
inline void events_heap_destroy(Heap*) {}
inline void events_process_init() {}
inline void events_fork(int) {}
inline void events_sync_point() {}
#endif

}  // namespace heapscope
