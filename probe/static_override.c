// A statically linked "allocator" for allocator_probe_static_test: glibc's own entry points
// under a different owner (the test executable), which is all the probe test needs.
#include <stddef.h>

void* __libc_malloc(size_t size);
void __libc_free(void* p);
void* __libc_realloc(void* p, size_t size);
void* __libc_calloc(size_t count, size_t size);

void* malloc(size_t size) { return __libc_malloc(size); }
void free(void* p) { __libc_free(p); }
void* realloc(void* p, size_t size) { return __libc_realloc(p, size); }
void* calloc(size_t count, size_t size) { return __libc_calloc(count, size); }
