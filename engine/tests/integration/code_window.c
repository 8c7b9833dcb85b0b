// Runs a little of everything a small program does through the allocator (sizes from 16 B to
// 1 MiB, calloc, realloc, an aligned block, a thread that allocates and exits), then prints
// how many pages of the preloaded library's code are mapped, and how many pages the kernel
// maps around one fault in a file like it (the library's copy, mapped again and touched once).
// code_window.py compares the two.  usage: code_window LIBRARY  (with LD_PRELOAD=LIBRARY)
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void* churn(void* arg) {
  void* blocks[256];
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 256; ++i) blocks[i] = malloc((size_t)(16 + (i * 37 + round) % 4000));
    for (int i = 0; i < 256; ++i) free(blocks[i]);
  }
  return arg;
}

static long present_pages(uintptr_t begin, uintptr_t end) {
  int pagemap = open("/proc/self/pagemap", O_RDONLY);
  if (pagemap < 0) return -1;
  long pages = 0;
  for (uintptr_t p = begin; p < end; p += 4096) {
    uint64_t entry = 0;
    if (pread(pagemap, &entry, sizeof entry, (off_t)(p / 4096 * 8)) != sizeof entry) return -1;
    pages += (long)(entry >> 63);
  }
  close(pagemap);
  return pages;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: code_window LIBRARY\n");
    return 2;
  }
  churn(NULL);
  char* text = calloc(100, 10);
  for (size_t size = 1000; size < (1u << 20); size *= 2) text = realloc(text, size);
  free(text);
  void* aligned = NULL;
  if (posix_memalign(&aligned, 4096, 10000) != 0) return 1;
  free(aligned);
  free(malloc(1u << 20));
  pthread_t thread;
  if (pthread_create(&thread, NULL, churn, NULL) != 0 || pthread_join(thread, NULL) != 0) return 1;

  long code_pages = 0;
  int mappings = 0;
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[4096];
  while (maps != NULL && fgets(line, sizeof line, maps) != NULL) {
    uintptr_t begin, end;
    char perms[8];
    char path[4096] = "";
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &begin, &end, perms, path) < 3) continue;
    if (strcmp(path, argv[1]) != 0 || perms[2] != 'x') continue;
    code_pages += present_pages(begin, end);
    ++mappings;
  }
  if (maps != NULL) fclose(maps);

  int fd = open(argv[1], O_RDONLY);
  off_t size = fd < 0 ? 0 : lseek(fd, 0, SEEK_END);
  volatile const char* copy =
      size > 0 ? mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  if (fd >= 0) close(fd);  // the mapping keeps the file
  if (copy == MAP_FAILED || mappings != 1) {
    fprintf(stderr, "code_window: %s not mapped once as code, or not readable\n", argv[1]);
    return 1;
  }
  (void)copy[0];
  long window_pages = present_pages((uintptr_t)copy, (uintptr_t)copy + (uintptr_t)size);
  munmap((void*)copy, (size_t)size);
  printf("code_pages %ld window_pages %ld\n", code_pages, window_pages);
  return 0;
}
