// A small allocation-heavy program for the `hsbench app` tests (app_test.cc): keeps a window of
// 64 live blocks of 16 B–1 KiB and replaces one per step, then prints a checksum.
//   --allocs N          steps (default 100000)
//   --exit CODE         exit with CODE after printing (a command that fails)
//   --print-allocator   also print which file serves malloc (output that differs by allocator)
//   --hold MIB          then hold MIB MiB resident for 300 ms (process-tree RSS tests)
// Built twice: dynamic, and with -static (APP_TEST_STATIC) as the statically linked case.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef APP_TEST_STATIC
#include <dlfcn.h>
#endif

int main(int argc, char** argv) {
  long steps = 100000;
  int exit_code = 0;
  int print_allocator = 0;
  long hold_mib = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--allocs") == 0 && i + 1 < argc) {
      steps = atol(argv[++i]);
    } else if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc) {
      exit_code = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--print-allocator") == 0) {
      print_allocator = 1;
    } else if (strcmp(argv[i], "--hold") == 0 && i + 1 < argc) {
      hold_mib = atol(argv[++i]);
    }
  }
  void* window[64] = {0};
  unsigned long long state = 42;
  unsigned long long checksum = 0;
  for (long i = 0; i < steps; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // an LCG: sizes only
    const size_t size = 16 + (size_t)((state >> 33) % 1009);
    const long slot = i % 64;
    free(window[slot]);
    char* p = malloc(size);
    if (p == NULL) return 99;
    p[0] = (char)i;
    p[size - 1] = (char)size;
    window[slot] = p;
    checksum += size;
  }
  for (int i = 0; i < 64; ++i) free(window[i]);
  printf("steps %ld checksum %llu\n", steps, checksum);
  if (hold_mib > 0) {
    // Written through a volatile pointer, one byte per page: the compiler may not drop it.
    volatile char* block = malloc((size_t)hold_mib << 20);
    if (block == NULL) return 98;
    for (size_t at = 0; at < ((size_t)hold_mib << 20); at += 4096) block[at] = 1;
    const struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    free((void*)block);
  }
#ifndef APP_TEST_STATIC
  if (print_allocator) {
    Dl_info info;
    const char* name = "(unknown)";
    if (dladdr(dlsym(RTLD_DEFAULT, "malloc"), &info) != 0 && info.dli_fname != NULL) {
      name =
          strrchr(info.dli_fname, '/') != NULL ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname;
    }
    printf("malloc from %s\n", name);
  }
#else
  (void)print_allocator;
#endif
  return exit_code;
}
