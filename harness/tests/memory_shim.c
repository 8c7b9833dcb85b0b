// Allocators of known memory behaviour for the memory-protocol tests (tests/memory_test.cc):
// a preloadable library that forwards the malloc family to the next definition (dlsym
// RTLD_NEXT) and, by mode:
//   SHIM_FOOTPRINT  inside hs-workload, the first request of >= 64 KiB from a thread other than
//                   the main one (the replay's workers; libstdc++'s start-up pool is a large
//                   request on the main thread) maps one private anonymous arena of exactly
//                   64 MiB and touches every page of it; every such request is then served
//                   from the arena's start (the blocks alias: the workload only writes to them)
//                   and never freed. The replay's peak RssAnon above the baseline is therefore
//                   the arena plus the small requests the next allocator serves: 64 MiB and a
//                   little.
//   SHIM_LEAKY      free() never gives memory back (realloc copies, never frees): RSS after the
//                   drain must stay at the peak.
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(SHIM_FOOTPRINT) && !defined(SHIM_LEAKY)
#error "define one of SHIM_FOOTPRINT, SHIM_LEAKY"
#endif

#include "preload/preload_bootstrap.h"

__attribute__((constructor)) static void shim_init(void) { preload_resolve(); }

#ifdef SHIM_FOOTPRINT
#define ARENA_BYTES ((size_t)64 << 20)
#define LARGE ((size_t)64 << 10)
static _Atomic(char*) arena;

static int in_arena(const void* p) {
  const char* a = atomic_load(&arena);
  return a != NULL && (const char*)p >= a && (const char*)p < a + ARENA_BYTES;
}

// The arena (mapped and touched on first use), or NULL outside hs-workload.
static char* large_block(size_t n) {
  if (n < LARGE || n > ARENA_BYTES || gettid() == getpid() ||
      strcmp(program_invocation_short_name, "hs-workload") != 0)
    return NULL;
  char* a = atomic_load(&arena);
  if (a != NULL) return a;
  char* fresh = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fresh == MAP_FAILED) return NULL;
  // No transparent huge pages: the arena's resident size is exactly what is touched.
  madvise(fresh, ARENA_BYTES, MADV_NOHUGEPAGE);
  for (size_t off = 0; off < ARENA_BYTES; off += 4096) fresh[off] = 1;
  char* expected = NULL;
  if (!atomic_compare_exchange_strong(&arena, &expected, fresh)) {
    munmap(fresh, ARENA_BYTES);
    return expected;
  }
  return fresh;
}
#endif

void* malloc(size_t n) {
  if (preload_must_boot()) return preload_boot_alloc(n);
#ifdef SHIM_FOOTPRINT
  char* big = large_block(n);
  if (big != NULL) return big;
#endif
  return preload_next.malloc(n);
}

void free(void* p) {
  if (p == NULL || preload_is_boot(p)) return;
#ifdef SHIM_FOOTPRINT
  if (in_arena(p)) return;
  preload_next.free(p);
#endif
}

void* calloc(size_t n, size_t size) {
  if (preload_must_boot()) return preload_boot_alloc(n * size);  // the buffer is zeroed
  return preload_next.calloc(n, size);
}

void* realloc(void* old, size_t n) {
  if (preload_is_boot(old)) return preload_boot_realloc(old, n, malloc);
  preload_resolve();
#ifdef SHIM_LEAKY
  // A copy that never frees the old block (glibc's realloc would reuse it).
  void* p = preload_next.malloc(n);
  if (p != NULL && old != NULL) {
    const size_t have = malloc_usable_size(old);
    memcpy(p, old, have < n ? have : n);
  }
  return p;
#else
  if (in_arena(old)) {
    void* p = malloc(n);
    if (p != NULL) memcpy(p, old, n < LARGE ? n : LARGE);  // arena blocks are >= LARGE
    return p;
  }
  return preload_next.realloc(old, n);
#endif
}

int posix_memalign(void** out, size_t align, size_t n) {
  preload_resolve();
  return preload_next.posix_memalign(out, align, n);
}

void* aligned_alloc(size_t align, size_t n) {
  preload_resolve();
  return preload_next.aligned_alloc(align, n);
}

void* memalign(size_t align, size_t n) {
  preload_resolve();
  return preload_next.memalign(align, n);
}
