// Allocators of known latency behaviour for the latency-protocol tests (tests/latency_test.cc):
// a preloadable library that forwards the malloc family to the next definition (dlsym RTLD_NEXT)
// and counts the malloc calls of hs-workload (one relaxed atomic add), by mode:
//   SHIM_PASS   nothing else: the baseline, entering the child exactly as the stall shim does
//               and paying the same count, so the two differ only by the planted stall;
//   SHIM_STALL  every 10,000th malloc sleeps 1 ms first: rare stalls that an open-loop
//               measurement must charge to every op due during them (p99.9 moves, p50 not).
// Only hs-workload's calls count, so the availability probe (another program) runs unstalled.
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if !defined(SHIM_PASS) && !defined(SHIM_STALL)
#error "define one of SHIM_PASS, SHIM_STALL"
#endif

#include "preload/preload_bootstrap.h"

#define STALL_EVERY 10000
#define STALL_NANOSECONDS 1000000

static int in_workload = -1;  // decided once, on the first counted call
static atomic_ulong mallocs;

__attribute__((constructor)) static void shim_init(void) {
  preload_resolve();
  in_workload = strcmp(program_invocation_short_name, "hs-workload") == 0;
}

static void on_malloc(void) {
  if (in_workload != 1) return;
  const unsigned long n = atomic_fetch_add_explicit(&mallocs, 1, memory_order_relaxed) + 1;
#ifdef SHIM_STALL
  if (n % STALL_EVERY == 0) {
    struct timespec left = {0, STALL_NANOSECONDS};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
#else
  (void)n;
#endif
}

void* malloc(size_t n) {
  if (preload_must_boot()) return preload_boot_alloc(n);
  on_malloc();
  return preload_next.malloc(n);
}

void free(void* p) {
  if (p == NULL || preload_is_boot(p)) return;
  preload_next.free(p);
}

void* calloc(size_t n, size_t size) {
  if (preload_must_boot()) return preload_boot_alloc(n * size);  // the buffer is zeroed
  return preload_next.calloc(n, size);
}

void* realloc(void* old, size_t n) {
  if (preload_is_boot(old)) return preload_boot_realloc(old, n, malloc);
  preload_resolve();
  return preload_next.realloc(old, n);
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
