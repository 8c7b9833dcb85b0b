// A program that brings its own allocator, for the `hsbench app` detection test: it defines
// malloc, free, calloc and realloc in the executable (exported, so they win symbol lookup over
// any LD_PRELOAD), as a bump allocator over a static arena that never reuses memory.
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static _Alignas(16) char arena[64 << 20];
static size_t used;

void* malloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n > sizeof arena - used) return NULL;
  void* p = arena + used;
  used += n;
  return p;
}

void free(void* p) { (void)p; }

void* calloc(size_t n, size_t size) {
  if (size != 0 && n > (size_t)-1 / size) return NULL;
  return malloc(n * size);  // the arena starts zeroed and is never reused
}

void* realloc(void* old, size_t n) {
  void* p = malloc(n);
  // The old block lies below the new one, so n bytes from it stay inside the arena.
  if (p != NULL && old != NULL) memcpy(p, old, n);
  return p;
}

int main(void) {
  unsigned long long checksum = 0;
  for (int i = 0; i < 100000; ++i) {
    char* p = malloc(32 + (size_t)(i % 200));
    if (p == NULL) return 1;
    p[0] = (char)i;
    checksum += (unsigned char)p[0];
    free(p);
  }
  printf("checksum %llu\n", checksum);
  return 0;
}
