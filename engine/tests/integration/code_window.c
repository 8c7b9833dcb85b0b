// Runs a little of everything a small program does through the allocator (sizes from 16 B to
// 1 MiB, calloc, realloc, an aligned block, a thread that allocates and exits), then prints
// how many pages of the preloaded library's code are mapped, how many pages the kernel maps
// around one fault in a file like it (the library's copy, mapped again and touched once), and
// how many pages are mapped of the segment that holds the library's unwind tables, which no
// such run reads. code_window.py checks them.  usage: code_window LIBRARY  (LD_PRELOAD=LIBRARY)
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
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

struct unwind_segment {
  const char* library;
  uintptr_t begin, end;  // the loaded segment that holds PT_GNU_EH_FRAME; begin 0 if none
};

static int find_unwind_segment(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct unwind_segment* found = data;
  if (info->dlpi_name == NULL || strcmp(info->dlpi_name, found->library) != 0) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_GNU_EH_FRAME) continue;
    uintptr_t tables = info->dlpi_phdr[i].p_vaddr;
    for (int j = 0; j < info->dlpi_phnum; ++j) {
      const ElfW(Phdr)* load = &info->dlpi_phdr[j];
      if (load->p_type == PT_LOAD && load->p_vaddr <= tables &&
          tables < load->p_vaddr + load->p_memsz) {
        found->begin = (info->dlpi_addr + load->p_vaddr) & ~(uintptr_t)4095;
        found->end = info->dlpi_addr + load->p_vaddr + load->p_memsz;
      }
    }
  }
  return 1;
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

  struct unwind_segment unwind = {argv[1], 0, 0};
  dl_iterate_phdr(find_unwind_segment, &unwind);
  long unwind_pages = unwind.begin != 0 ? present_pages(unwind.begin, unwind.end) : -1;

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
  printf("code_pages %ld window_pages %ld unwind_pages %ld\n", code_pages, window_pages,
         unwind_pages);
  return 0;
}
