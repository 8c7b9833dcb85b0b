/* Preloadable allocation counter for the timed-region audit (never used in campaigns).
 *
 * Wraps the allocator entry points with dlsym(RTLD_NEXT) and counts calls made, from any
 * thread, between hs_shim_timed_region_begin() and hs_shim_timed_region_end(), which
 * hs-workload finds with dlsym(RTLD_DEFAULT). dlsym itself may allocate (dlerror
 * state), so calls made while resolving are served from a static bootstrap buffer
 * (preload/preload_bootstrap.h). */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "preload/preload_bootstrap.h"

struct hs_shim_counts {
  uint64_t malloc, free, realloc, calloc, aligned;
};

static atomic_int armed;
static atomic_uint_fast64_t n_malloc, n_free, n_realloc, n_calloc, n_aligned;

__attribute__((constructor)) static void init(void) { preload_resolve(); }

#define COUNT(counter)                                    \
  if (atomic_load_explicit(&armed, memory_order_relaxed)) \
  atomic_fetch_add_explicit(&(counter), 1, memory_order_relaxed)

void* malloc(size_t n) {
  if (preload_must_boot()) return preload_boot_alloc(n);
  COUNT(n_malloc);
  return preload_next.malloc(n);
}

void free(void* p) {
  if (preload_is_boot(p)) return;
  if (preload_next.free == NULL) {
    preload_resolve();
    if (preload_next.free == NULL) return; /* from inside the lookup: nothing of ours to free */
  }
  COUNT(n_free);
  preload_next.free(p);
}

void* calloc(size_t n, size_t size) {
  if (preload_must_boot()) return preload_boot_alloc(n * size); /* the buffer is zeroed */
  COUNT(n_calloc);
  return preload_next.calloc(n, size);
}

void* realloc(void* p, size_t n) {
  preload_resolve();
  if (preload_is_boot(p)) return preload_boot_realloc(p, n, preload_next.malloc);
  COUNT(n_realloc);
  return preload_next.realloc(p, n);
}

int posix_memalign(void** out, size_t align, size_t n) {
  preload_resolve();
  COUNT(n_aligned);
  return preload_next.posix_memalign(out, align, n);
}

void* aligned_alloc(size_t align, size_t n) {
  preload_resolve();
  COUNT(n_aligned);
  return preload_next.aligned_alloc(align, n);
}

void* memalign(size_t align, size_t n) {
  preload_resolve();
  COUNT(n_aligned);
  return preload_next.memalign(align, n);
}

void* valloc(size_t n) {
  preload_resolve();
  COUNT(n_aligned);
  return preload_next.valloc(n);
}

void hs_shim_timed_region_begin(void) {
  atomic_store(&n_malloc, 0);
  atomic_store(&n_free, 0);
  atomic_store(&n_realloc, 0);
  atomic_store(&n_calloc, 0);
  atomic_store(&n_aligned, 0);
  atomic_store(&armed, 1);
}

void hs_shim_timed_region_end(void) { atomic_store(&armed, 0); }

void hs_shim_read_counts(struct hs_shim_counts* out) {
  out->malloc = atomic_load(&n_malloc);
  out->free = atomic_load(&n_free);
  out->realloc = atomic_load(&n_realloc);
  out->calloc = atomic_load(&n_calloc);
  out->aligned = atomic_load(&n_aligned);
}
