// A C program: no C++ runtime anywhere. Built twice (engine/tests/CMakeLists.txt): linked with
// the static library by the C compiler driver (so the archive must need nothing from libstdc++,
// libm or zlib), and plain, run under LD_PRELOAD=libheapscope.so (HS_C_PRELOADED). Either way
// the C library's allocations must be the engine's, and the process must have no C++ runtime
// loaded (the engine libraries need only libc). Given a path (cxx_new_probe.cc built as a
// library), it then loads that C++ code privately and checks that a failing new still throws.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HS_C_PRELOADED
#include "heapscope/heapscope.h"
#endif

static int fail(const char* what) {
  fprintf(stderr, "c_program: %s\n", what);
  return 1;
}

int main(int argc, char** argv) {
  int (*in_heap)(const void*) = NULL;
#ifdef HS_C_PRELOADED
  *(void**)&in_heap = dlsym(RTLD_DEFAULT, "hs_is_in_heap_region");
  if (in_heap == NULL) return fail("hs_is_in_heap_region not found: is the engine preloaded?");
#else
  in_heap = hs_is_in_heap_region;
#endif
  void* blocks[5] = {malloc(16), calloc(10, 10), realloc(NULL, 1000), aligned_alloc(64, 128),
                     strdup("heapscope")};
  for (int i = 0; i < 5; ++i) {
    if (blocks[i] == NULL) return fail("allocation failed");
    if (!in_heap(blocks[i])) return fail("an allocation is not the engine's");
  }
  for (int i = 0; i < 5; ++i) free(blocks[i]);
  const char* runtimes[] = {"libstdc++.so.6", "libc++.so.1", "libm.so.6", "libz.so.1",
                            "libgcc_s.so.1"};
  for (int i = 0; i < 5; ++i) {
    if (dlopen(runtimes[i], RTLD_LAZY | RTLD_NOLOAD) != NULL) {
      fprintf(stderr, "c_program: %s is loaded\n", runtimes[i]);
      return 1;
    }
  }
  puts("c_program: the engine serves malloc, only libc loaded");
  if (argc > 1) {
    void* probe = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (probe == NULL) return fail(dlerror());
    int (*probe_new_failure)(void) = NULL;
    *(void**)&probe_new_failure = dlsym(probe, "hs_probe_new_failure");
    if (probe_new_failure == NULL) return fail("hs_probe_new_failure not found");
    int failed_check = probe_new_failure();
    if (failed_check != 0) {
      fprintf(stderr, "c_program: C++ code loaded late: new-failure check %d failed\n",
              failed_check);
      return 1;
    }
    puts("c_program: C++ code loaded late gets bad_alloc and its new-handler");
  }
  return 0;
}
