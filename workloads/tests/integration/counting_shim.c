/* Preloadable allocation counter for the timed-region audit (never used in campaigns).
 *
 * Wraps the allocator entry points with dlsym(RTLD_NEXT) and counts calls made, from any
 * thread, between hs_shim_timed_region_begin() and hs_shim_timed_region_end(), which
 * hs-workload finds with dlsym(RTLD_DEFAULT). dlsym itself may allocate (dlerror
 * state), so calls made while resolving are served from a static bootstrap buffer. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct hs_shim_counts {
  uint64_t malloc, free, realloc, calloc, aligned;
};

static void* (*real_malloc)(size_t);
static void (*real_free)(void*);
static void* (*real_calloc)(size_t, size_t);
static void* (*real_realloc)(void*, size_t);
static int (*real_posix_memalign)(void**, size_t, size_t);
static void* (*real_aligned_alloc)(size_t, size_t);
static void* (*real_memalign)(size_t, size_t);
static void* (*real_valloc)(size_t);

static _Alignas(16) char boot[16384];
static size_t boot_used;
static int resolving;

static atomic_int armed;
static atomic_uint_fast64_t n_malloc, n_free, n_realloc, n_calloc, n_aligned;

static void* boot_alloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (boot_used + n > sizeof boot) return NULL;
  void* p = boot + boot_used;
  boot_used += n;
  return p;
}

static int is_boot(const void* p) {
  return (const char*)p >= boot && (const char*)p < boot + sizeof boot;
}

static void resolve(void) {
  if (real_malloc != NULL) return;
  resolving = 1;
  real_calloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  real_free = (void (*)(void*))dlsym(RTLD_NEXT, "free");
  real_realloc = (void* (*)(void*, size_t))dlsym(RTLD_NEXT, "realloc");
  real_posix_memalign = (int (*)(void**, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
  real_memalign = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
  real_valloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "valloc");
  real_malloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "malloc"); /* last: the "ready" flag */
  resolving = 0;
}

__attribute__((constructor)) static void init(void) { resolve(); }

#define COUNT(counter)                                    \
  if (atomic_load_explicit(&armed, memory_order_relaxed)) \
  atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed)

void* malloc(size_t n) {
  if (real_malloc == NULL) {
    if (resolving) return boot_alloc(n);
    resolve();
  }
  COUNT(n_malloc);
  return real_malloc(n);
}

void free(void* p) {
  if (is_boot(p)) return;
  if (real_free == NULL) resolve();
  COUNT(n_free);
  real_free(p);
}

void* calloc(size_t n, size_t size) {
  if (real_malloc == NULL) {
    if (resolving) return boot_alloc(n * size); /* static buffer: already zero */
    resolve();
  }
  COUNT(n_calloc);
  return real_calloc(n, size);
}

void* realloc(void* p, size_t n) {
  if (real_malloc == NULL) resolve();
  if (is_boot(p)) {
    void* q = real_malloc(n);
    if (q != NULL) {
      const size_t avail = (size_t)(boot + sizeof boot - (char*)p);
      memcpy(q, p, n < avail ? n : avail);
    }
    return q;
  }
  COUNT(n_realloc);
  return real_realloc(p, n);
}

int posix_memalign(void** out, size_t align, size_t n) {
  if (real_malloc == NULL) resolve();
  COUNT(n_aligned);
  return real_posix_memalign(out, align, n);
}

void* aligned_alloc(size_t align, size_t n) {
  if (real_malloc == NULL) resolve();
  COUNT(n_aligned);
  return real_aligned_alloc(align, n);
}

void* memalign(size_t align, size_t n) {
  if (real_malloc == NULL) resolve();
  COUNT(n_aligned);
  return real_memalign(align, n);
}

void* valloc(size_t n) {
  if (real_malloc == NULL) resolve();
  COUNT(n_aligned);
  return real_valloc(n);
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
