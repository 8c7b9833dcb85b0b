/* The bootstrap every LD_PRELOAD malloc shim of this repository shares: how the shim finds the
 * next definition of each malloc-family function (dlsym RTLD_NEXT) without calling malloc
 * itself.
 *
 * dlsym may allocate while it resolves (dlerror state), and those calls land in the shim's own
 * malloc/calloc before the next allocator is known. They are served from a static bootstrap
 * buffer instead (bump allocation, 16-byte granules, already zero, never reused); a free of
 * bootstrap memory does nothing and a realloc of it moves the block out. Nothing here calls
 * malloc, and nothing allocates.
 *
 * Use, in a C shim:
 *
 *   #define _GNU_SOURCE                  (before every header: RTLD_NEXT)
 *   #define PRELOAD_BOOT_BYTES (1 << 16) (optional: the buffer's size, default 16 KiB)
 *   #include "preload/preload_bootstrap.h"
 *
 *   void* malloc(size_t n) {
 *     if (preload_must_boot()) return preload_boot_alloc(n);
 *     ...                        (count, delay, ...)
 *     return preload_next.malloc(n);
 *   }
 *   void free(void* p) { if (p == NULL || preload_is_boot(p)) return; preload_next.free(p); }
 *   realloc of a bootstrap block: preload_boot_realloc(old, n, <an allocation function>).
 *
 * Call preload_resolve() from a constructor too, so the lookups happen before any thread but
 * the first exists. Everything is `static`: each shim that includes this has its own state.
 * C only (the shims are C): a C++ file must not include it. */
#ifndef HEAPSCOPE_PRELOAD_BOOTSTRAP_H
#define HEAPSCOPE_PRELOAD_BOOTSTRAP_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before every #include (RTLD_NEXT needs it)"
#endif

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#ifndef PRELOAD_BOOT_BYTES
#define PRELOAD_BOOT_BYTES 16384
#endif

/* The next definition of each function (the allocator the shim stands in front of). */
struct preload_next_allocator {
  void* (*malloc)(size_t);
  void (*free)(void*);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*memalign)(size_t, size_t);
  void* (*valloc)(size_t);
};

static struct preload_next_allocator preload_next;
static _Alignas(64) char preload_boot[PRELOAD_BOOT_BYTES];
static size_t preload_boot_used;
static int preload_resolving;

/* Looks every function up once. Returns at once when done or when called from inside its own
 * dlsym calls; preload_next.malloc is set last, so it doubles as the "ready" flag. */
static inline void preload_resolve(void) {
  if (preload_next.malloc != NULL || preload_resolving) return;
  preload_resolving = 1;
  preload_next.calloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  preload_next.free = (void (*)(void*))dlsym(RTLD_NEXT, "free");
  preload_next.realloc = (void* (*)(void*, size_t))dlsym(RTLD_NEXT, "realloc");
  preload_next.posix_memalign = (int (*)(void**, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
  preload_next.aligned_alloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
  preload_next.memalign = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
  preload_next.valloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "valloc");
  preload_next.malloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "malloc"); /* last: "ready" */
  preload_resolving = 0;
}

/* For malloc and calloc: resolves on first use, and is nonzero when the call must be served
 * from the bootstrap buffer (it comes from inside the lookup). */
static inline int preload_must_boot(void) {
  if (preload_next.malloc == NULL) preload_resolve();
  return preload_next.malloc == NULL;
}

/* `n` bytes of the bootstrap buffer (zeroed), or NULL when it is used up. */
static inline void* preload_boot_alloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (preload_boot_used + n > sizeof preload_boot) return NULL;
  void* p = preload_boot + preload_boot_used;
  preload_boot_used += n;
  return p;
}

static inline int preload_is_boot(const void* p) {
  return (const char*)p >= preload_boot && (const char*)p < preload_boot + sizeof preload_boot;
}

/* realloc of a bootstrap block: a new block of `n` bytes from `alloc` holding the old contents
 * (its size is not recorded: as much as fits before the buffer's end is copied). */
static inline void* preload_boot_realloc(void* old, size_t n, void* (*alloc)(size_t)) {
  void* p = alloc(n);
  const size_t room = (size_t)(preload_boot + sizeof preload_boot - (const char*)old);
  if (p != NULL) memcpy(p, old, n < room ? n : room);
  return p;
}

#endif /* HEAPSCOPE_PRELOAD_BOOTSTRAP_H */
