// A misbehaving allocator for the campaign tests: a preloadable library that forwards
// malloc/free/realloc/calloc/posix_memalign/aligned_alloc/memalign to the next definition
// (dlsym RTLD_NEXT) and, by SHIM_MODE, adds:
//   SHIM_SLOW   every call serialized by one global mutex plus a short busy delay: a planted
//               slow allocator that the statistics must flag;
//   SHIM_CRASH  abort() on the 1000th malloc inside hs-workload;
//   SHIM_HANG   sleep forever on the 1000th malloc inside hs-workload (the watchdog's case).
// Crash and hang only fire in hs-workload, so the availability probe (another program) passes.
// dlsym itself may allocate: while resolving, requests come from a static bootstrap buffer,
// and frees of bootstrap memory are ignored.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !defined(SHIM_SLOW) && !defined(SHIM_CRASH) && !defined(SHIM_HANG)
#error "define one of SHIM_SLOW, SHIM_CRASH, SHIM_HANG"
#endif

static void* (*real_malloc)(size_t);
static void (*real_free)(void*);
static void* (*real_calloc)(size_t, size_t);
static void* (*real_realloc)(void*, size_t);
static int (*real_posix_memalign)(void**, size_t, size_t);
static void* (*real_aligned_alloc)(size_t, size_t);
static void* (*real_memalign)(size_t, size_t);

static _Alignas(64) char boot[1 << 16];
static size_t boot_used;
static int resolving;

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
  if (real_malloc != NULL || resolving) return;
  resolving = 1;
  real_calloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  real_free = (void (*)(void*))dlsym(RTLD_NEXT, "free");
  real_realloc = (void* (*)(void*, size_t))dlsym(RTLD_NEXT, "realloc");
  real_posix_memalign = (int (*)(void**, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
  real_memalign = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
  real_malloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "malloc");
  resolving = 0;
}

__attribute__((constructor)) static void shim_init(void) { resolve(); }

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
  if (real_malloc == NULL) {
    resolve();
    if (real_malloc == NULL) return boot_alloc(n);
  }
  on_malloc();
  enter();
  void* p = real_malloc(n);
  leave();
  return p;
}

void free(void* p) {
  if (p == NULL || is_boot(p)) return;
  enter();
  real_free(p);
  leave();
}

void* calloc(size_t n, size_t size) {
  if (real_calloc == NULL) {
    resolve();
    if (real_calloc == NULL) return boot_alloc(n * size);  // static buffer is zeroed
  }
  enter();
  void* p = real_calloc(n, size);
  leave();
  return p;
}

void* realloc(void* old, size_t n) {
  if (is_boot(old)) {
    void* p = malloc(n);
    const size_t room = (size_t)(boot + sizeof boot - (const char*)old);
    if (p != NULL) memcpy(p, old, n < room ? n : room);
    return p;
  }
  resolve();
  enter();
  void* p = real_realloc(old, n);
  leave();
  return p;
}

int posix_memalign(void** out, size_t align, size_t n) {
  resolve();
  enter();
  int rc = real_posix_memalign(out, align, n);
  leave();
  return rc;
}

void* aligned_alloc(size_t align, size_t n) {
  resolve();
  enter();
  void* p = real_aligned_alloc(align, n);
  leave();
  return p;
}

void* memalign(size_t align, size_t n) {
  resolve();
  enter();
  void* p = real_memalign(align, n);
  leave();
  return p;
}
