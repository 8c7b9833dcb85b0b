// A misbehaving allocator for the campaign tests: a preloadable library that forwards
// malloc/free/realloc/calloc/posix_memalign/aligned_alloc/memalign to the next definition
// (dlsym RTLD_NEXT) and, by SHIM_MODE, adds:
//   SHIM_SLOW   every call serialized by one global mutex plus a short busy delay: a planted
//               slow allocator that the statistics must flag;
//   SHIM_CRASH  abort() on the 1000th malloc inside hs-workload;
//   SHIM_HANG   sleep forever on the 1000th malloc inside hs-workload (the watchdog's case).
// Crash and hang only fire in hs-workload, so the availability probe (another program) passes.
// dlsym itself may allocate: while resolving, requests come from a static bootstrap buffer,
// and frees of bootstrap memory are ignored (preload/preload_bootstrap.h).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !defined(SHIM_SLOW) && !defined(SHIM_CRASH) && !defined(SHIM_HANG)
#error "define one of SHIM_SLOW, SHIM_CRASH, SHIM_HANG"
#endif

#define PRELOAD_BOOT_BYTES (1 << 16)
#include "preload/preload_bootstrap.h"

__attribute__((constructor)) static void shim_init(void) { preload_resolve(); }

#ifdef SHIM_SLOW
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void enter(void) {
  pthread_mutex_lock(&lock);
  for (volatile int i = 0; i < 200; ++i) {
  }
}
static void leave(void) { pthread_mutex_unlock(&lock); }
static void on_malloc(void) {}
#else
static void enter(void) {}
static void leave(void) {}
static atomic_long mallocs;
static void on_malloc(void) {
  if (strcmp(program_invocation_short_name, "hs-workload") != 0) return;
  if (atomic_fetch_add(&mallocs, 1) + 1 != 1000) return;
#ifdef SHIM_CRASH
  abort();
#else
  for (;;) sleep(1000);
#endif
}
#endif

void* malloc(size_t n) {
  if (preload_must_boot()) return preload_boot_alloc(n);
  on_malloc();
  enter();
  void* p = preload_next.malloc(n);
  leave();
  return p;
}

void free(void* p) {
  if (p == NULL || preload_is_boot(p)) return;
  enter();
  preload_next.free(p);
  leave();
}

void* calloc(size_t n, size_t size) {
  if (preload_must_boot()) return preload_boot_alloc(n * size);  // the buffer is zeroed
  enter();
  void* p = preload_next.calloc(n, size);
  leave();
  return p;
}

void* realloc(void* old, size_t n) {
  if (preload_is_boot(old)) return preload_boot_realloc(old, n, malloc);
  preload_resolve();
  enter();
  void* p = preload_next.realloc(old, n);
  leave();
  return p;
}

int posix_memalign(void** out, size_t align, size_t n) {
  preload_resolve();
  enter();
  int rc = preload_next.posix_memalign(out, align, n);
  leave();
  return rc;
}

void* aligned_alloc(size_t align, size_t n) {
  preload_resolve();
  enter();
  void* p = preload_next.aligned_alloc(align, n);
  leave();
  return p;
}

void* memalign(size_t align, size_t n) {
  preload_resolve();
  enter();
  void* p = preload_next.memalign(align, n);
  leave();
  return p;
}
