// heapscope engine: public C API.
//
// The C library's allocation functions (malloc, free, ... when the overriding library is used)
// and the same under the hs_ prefix, with the C library's semantics including errno:
//   * allocation failure (including size overflow) returns NULL and sets errno = ENOMEM;
//   * an invalid alignment (zero, not a power of two, or for posix_memalign not a multiple of
//     sizeof(void*)) returns NULL / EINVAL;
//   * hs_malloc(0) returns a unique, freeable pointer; hs_free(NULL) does nothing.
//
// Zeroing rules of the "re-zeroing" family (hs_rezalloc, hs_recalloc and aligned forms): the
// block must have come from a zeroing allocation (hs_zalloc, hs_calloc, or an earlier
// hs_rezalloc/hs_recalloc). A zeroing allocation zeroes the block's whole *usable* size, and a
// re-zeroing call that shrinks in place zeroes the tail it gives up, so the invariant "every
// byte past the requested size reads zero" holds across calls. Hence on growth every byte from
// the old *requested* size up to the new size reads as zero (provided the program never wrote
// past its requested size); bytes below the old size are kept. (mimalloc-pprof zeroes only from
// the old usable size and leaves stale bytes after an in-place shrink.)
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HS_API __attribute__((visibility("default")))
#define HS_MALLOC_ATTR __attribute__((malloc, warn_unused_result))
#else
#define HS_API
#define HS_MALLOC_ATTR
#endif

// ---- basic allocation ----------------------------------------------------------------------
HS_API HS_MALLOC_ATTR void* hs_malloc(size_t size);
HS_API HS_MALLOC_ATTR void* hs_zalloc(size_t size);                // zero-initialized
HS_API HS_MALLOC_ATTR void* hs_calloc(size_t count, size_t size);  // overflow -> NULL/ENOMEM
HS_API void* hs_realloc(void* p, size_t new_size);  // realloc(p, 0) frees, returns NULL
HS_API void* hs_reallocarray(void* p, size_t count, size_t size);
HS_API void hs_free(void* p);
HS_API void hs_free_sized(void* p, size_t size);  // size is a hint, may be ignored
HS_API size_t hs_usable_size(const void* p);      // 0 for NULL

// ---- aligned allocation (alignment: power of two; up to at least 1 MiB is efficient) --------
HS_API HS_MALLOC_ATTR void* hs_malloc_aligned(size_t size, size_t alignment);
HS_API HS_MALLOC_ATTR void* hs_zalloc_aligned(size_t size, size_t alignment);
HS_API HS_MALLOC_ATTR void* hs_calloc_aligned(size_t count, size_t size, size_t alignment);
HS_API void* hs_realloc_aligned(void* p, size_t new_size, size_t alignment);
HS_API int hs_posix_memalign(void** out, size_t alignment, size_t size);  // returns 0/EINVAL/ENOMEM
HS_API HS_MALLOC_ATTR void* hs_aligned_alloc(size_t alignment, size_t size);
HS_API HS_MALLOC_ATTR void* hs_memalign(size_t alignment, size_t size);
HS_API HS_MALLOC_ATTR void* hs_valloc(size_t size);
HS_API HS_MALLOC_ATTR void* hs_pvalloc(size_t size);

// ---- zeroing / expanding family -------------------------------------------------------------
HS_API void* hs_rezalloc(void* p, size_t new_size);
HS_API void* hs_recalloc(void* p, size_t count, size_t size);
HS_API void* hs_rezalloc_aligned(void* p, size_t new_size, size_t alignment);
HS_API void* hs_recalloc_aligned(void* p, size_t count, size_t size, size_t alignment);
// Grow (or shrink) p in place to at least new_size; returns p on success, NULL if it cannot
// be done without moving (p stays valid and unchanged).
HS_API void* hs_expand(void* p, size_t new_size);

// ---- first-class heaps -----------------------------------------------------------------------
// A heap belongs to the thread that created it: only that thread allocates from it; any
// thread may free its blocks. hs_heap_delete moves live blocks to the owning thread's default
// heap; hs_heap_destroy frees every block in the heap at once.
typedef struct hs_heap_s hs_heap_t;
HS_API hs_heap_t* hs_heap_new(void);
HS_API void hs_heap_delete(hs_heap_t* heap);
HS_API void hs_heap_destroy(hs_heap_t* heap);
HS_API hs_heap_t* hs_heap_get_default(void);
HS_API HS_MALLOC_ATTR void* hs_heap_malloc(hs_heap_t* heap, size_t size);
HS_API HS_MALLOC_ATTR void* hs_heap_zalloc(hs_heap_t* heap, size_t size);
HS_API HS_MALLOC_ATTR void* hs_heap_calloc(hs_heap_t* heap, size_t count, size_t size);
HS_API void* hs_heap_realloc(hs_heap_t* heap, void* p, size_t new_size);
HS_API HS_MALLOC_ATTR void* hs_heap_malloc_aligned(hs_heap_t* heap, size_t size, size_t alignment);
// True if p points into a block of a page that heap owns (O(1); liveness is not checked). A
// full page of a default heap whose thread is idle in the allocator may be taken over by a
// thread freeing into it (first-class heaps' pages never are): its blocks then answer for
// that thread's default heap.
HS_API int hs_heap_contains(const hs_heap_t* heap, const void* p);
// True if p points into memory managed by heapscope (O(1), any pointer value is safe).
HS_API int hs_is_in_heap_region(const void* p);

// ---- statistics --------------------------------------------------------------------------------
#define HS_STATS_VERSION 4  // 2 added huge_remaps, 3 pages_taken_over, 4 pages_given_back
// Size/version tagged: callers set .size = sizeof(hs_stats_t) and .version = HS_STATS_VERSION;
// fields past an older caller's size are never written. The counts and bytes of the calling
// thread's heaps and of exited threads are exact. Another live thread's small and medium
// blocks (frees into them included, whoever made them) are counted page by page, as its
// pages fill up, empty or change hands, at its purge rounds and when it reads statistics
// itself, so they may lag by what happened since on its pages in use. The other counters are
// exact at quiescence.
typedef struct hs_stats_s {
  size_t size;
  uint32_t version;
  uint32_t reserved0;
  uint64_t alloc_count;         // successful allocations (cumulative)
  uint64_t free_count;          // frees of non-NULL pointers (cumulative)
  uint64_t requested_bytes;     // bytes asked for (cumulative)
  uint64_t allocated_bytes;     // usable bytes of live blocks
  uint64_t committed_bytes;     // bytes mapped and not purged (resident at most)
  uint64_t committed_peak;      // high-water mark of committed_bytes
  uint64_t reserved_bytes;      // address space reserved from the OS
  uint64_t purged_bytes;        // cumulative bytes returned to the OS by purge/unmap
  uint64_t pages;               // pages (size-class spans) currently in use
  uint64_t segments;            // segments currently mapped
  uint64_t heaps;               // heaps alive (thread default heaps and first-class heaps)
  uint64_t threads;             // threads with a live heapscope heap
  uint64_t huge_count;          // live huge (dedicated-mapping) allocations
  uint64_t abandoned_segments;  // segments of exited threads not yet reclaimed
  uint64_t huge_remaps;         // huge reallocs served by remapping pages, not copying (v2)
  uint64_t pages_taken_over;    // full pages taken from threads idle in the allocator (v3)
  uint64_t pages_given_back;    // emptied pages purged for threads idle in the allocator (v4)
} hs_stats_t;
// Process-wide statistics. Returns 0 on success, -1 if the struct is too small/unknown.
HS_API int hs_stats_get(hs_stats_t* out);
// Statistics of one heap (counts and bytes of that heap only; process-level fields zero); exact
// when the calling thread owns the heap, else as hs_stats_get counts another thread's.
HS_API int hs_heap_stats_get(const hs_heap_t* heap, hs_stats_t* out);
// Writes the statistics to stderr (or fd) without allocating.
HS_API void hs_stats_print(int fd);

// ---- options ----------------------------------------------------------------------------------
// One table; every option is also read from HEAPSCOPE_<NAME> in the environment at start-up.
typedef enum hs_option_e {
  hs_option_verbose = 0,  // HEAPSCOPE_VERBOSE: print warnings and errors (default 0)
  hs_option_show_stats,   // HEAPSCOPE_SHOW_STATS: print statistics at exit (default 0)
  hs_option_purge_delay,  // HEAPSCOPE_PURGE_DELAY: ms before free memory is purged (10; -1 never)
  hs_option_huge_cache_bytes,  // HEAPSCOPE_HUGE_CACHE_BYTES: freed huge mappings kept (at least)
  hs_option_check_frees,       // HEAPSCOPE_CHECK_FREES: detect double/invalid free (0; 1 in debug)
  hs_option_purge_delay_max,   // HEAPSCOPE_PURGE_DELAY_MAX: ceiling of the adaptive delay (250 ms)
  hs_option_dirty_max_bytes,   // HEAPSCOPE_DIRTY_MAX_BYTES: free memory a thread keeps resident
  hs_option_fault_map_every,   // HEAPSCOPE_FAULT_MAP_EVERY: testing, every Nth OS mapping fails (0)
  hs_option_purge_thread,      // HEAPSCOPE_PURGE_THREAD: 1 starts a thread that returns free
                               // memory to the OS while no thread calls the allocator; -1 (the
                               // default) starts it once exited pool threads leave memory worth
                               // holding for the next; 0 never (Linux)
  hs_option_transparent_huge_pages,  // HEAPSCOPE_TRANSPARENT_HUGE_PAGES: 0 never for segments,
                                     // 1 as the system decides, 2 asked for (0; Linux)
  hs_option_count_
} hs_option_t;
HS_API long hs_option_get(hs_option_t option);
HS_API void hs_option_set(hs_option_t option, long value);
HS_API const char* hs_option_name(hs_option_t option);  // e.g. "purge_delay"

// Purges free memory now and takes over exited threads' segments that were freed into
// (force != 0: also the current thread's cached memory, and every exited thread's segment).
HS_API void hs_collect(int force);
// Library version, e.g. 100 for 0.1.0.
HS_API int hs_version(void);

#ifdef __cplusplus
}
#endif
