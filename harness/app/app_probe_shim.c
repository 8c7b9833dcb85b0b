// The tracing shim of `hsbench app`'s preload probe (app_probe.h). Preloaded in front of the
// allocator under test (LD_PRELOAD="this:allocator"), it counts malloc-family calls and
// appends one line per process event to the file named by HEAPSCOPE_APP_PROBE_OUT:
//
//   start<TAB>pid<TAB>ppid<TAB>allocs<TAB>frees<TAB>malloc-object<TAB>exe     (constructor)
//   exit <TAB>pid<TAB>ppid<TAB>allocs<TAB>frees<TAB>malloc-object<TAB>exe     (destructor)
//
// A "start" line is written by every process image that loads the shim, so a shell or a
// compiler driver that execs or spawns children leaves one line per program it ran; a process
// that execs or _exits leaves no "exit" line. malloc-object is the file that serves `malloc`
// for the whole process: dlsym(RTLD_DEFAULT) finds the executable when it defines malloc
// itself, else this shim, in which case the answer is the next definition (RTLD_NEXT).
//
// Never calls malloc itself (it would count itself and could recurse): numbers are formatted
// by hand into a stack buffer and written with one write(2) on an O_APPEND descriptor, so
// lines from concurrent processes do not interleave. dlsym may allocate while resolving; those
// requests come from a static bootstrap buffer (preload/preload_bootstrap.h).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload/preload_bootstrap.h"

static atomic_ulong allocs;
static atomic_ulong frees;
static char malloc_object[PATH_MAX];

// --- counting wrappers ------------------------------------------------------------------------

void* malloc(size_t n) {
  if (preload_must_boot()) return preload_boot_alloc(n);
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return preload_next.malloc(n);
}

void free(void* p) {
  if (p == NULL || preload_is_boot(p)) return;
  preload_resolve();
  atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
  preload_next.free(p);
}

void* calloc(size_t n, size_t size) {
  if (preload_must_boot()) return preload_boot_alloc(n * size);  // the buffer is zeroed
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return preload_next.calloc(n, size);
}

void* realloc(void* old, size_t n) {
  preload_resolve();
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  if (preload_is_boot(old)) return preload_boot_realloc(old, n, preload_next.malloc);
  return preload_next.realloc(old, n);
}

int posix_memalign(void** out, size_t align, size_t n) {
  preload_resolve();
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return preload_next.posix_memalign(out, align, n);
}

void* aligned_alloc(size_t align, size_t n) {
  preload_resolve();
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return preload_next.aligned_alloc(align, n);
}

void* memalign(size_t align, size_t n) {
  preload_resolve();
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return preload_next.memalign(align, n);
}

void* valloc(size_t n) {
  preload_resolve();
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return preload_next.valloc(n);
}

// --- the record -------------------------------------------------------------------------------

// Appends `s` to buf[*len], never past `cap - 1`.
static void put_str(char* buf, size_t* len, size_t cap, const char* s) {
  while (*s != '\0' && *len + 1 < cap) buf[(*len)++] = *s++;
}

static void put_num(char* buf, size_t* len, size_t cap, unsigned long v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0 && *len + 1 < cap) buf[(*len)++] = digits[--n];
}

// The file that defines `malloc` for this process (see the header comment).
static void find_malloc_object(void) {
  // `&malloc` here would go through the GOT and name the winning definition, so "is it this
  // shim?" is asked by comparing load addresses with a static function of ours. A non-PIE
  // executable that takes malloc's address has a "canonical PLT" entry: dlsym returns that
  // stub, inside the executable, although the executable defines no malloc (dladdr then
  // matches an undefined "malloc" symbol there). Both cases mean the winning definition is
  // this shim's, so the allocator serving the process is the next one.
  Dl_info self;
  Dl_info info;
  const ElfW(Sym)* sym = NULL;
  struct link_map* map = NULL;
  void* address = dlsym(RTLD_DEFAULT, "malloc");
  if (address != NULL && dladdr1(address, &info, (void**)&sym, RTLD_DL_SYMENT) != 0 &&
      dladdr((void*)&find_malloc_object, &self) != 0 &&
      (info.dli_fbase == self.dli_fbase || sym == NULL || sym->st_shndx == SHN_UNDEF)) {
    address = (void*)preload_next.malloc;
  }
  malloc_object[0] = '\0';
  if (address == NULL || dladdr1(address, &info, (void**)&map, RTLD_DL_LINKMAP) == 0) {
    strcpy(malloc_object, "(unresolved)");
    return;
  }
  if (map == NULL || map->l_name == NULL || map->l_name[0] == '\0') {
    const ssize_t n = readlink("/proc/self/exe", malloc_object, sizeof malloc_object - 1);
    malloc_object[n > 0 ? n : 0] = '\0';
    return;
  }
  const size_t n = strlen(map->l_name);
  if (n < sizeof malloc_object) memcpy(malloc_object, map->l_name, n + 1);
}

static void write_record(const char* event) {
  const char* path = getenv("HEAPSCOPE_APP_PROBE_OUT");
  if (path == NULL || *path == '\0') return;
  char exe[PATH_MAX];
  const ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[exe_len > 0 ? exe_len : 0] = '\0';

  char line[2 * PATH_MAX + 128];
  size_t len = 0;
  const size_t cap = sizeof line;
  put_str(line, &len, cap, event);
  put_str(line, &len, cap, "\t");
  put_num(line, &len, cap, (unsigned long)getpid());
  put_str(line, &len, cap, "\t");
  put_num(line, &len, cap, (unsigned long)getppid());
  put_str(line, &len, cap, "\t");
  put_num(line, &len, cap, atomic_load(&allocs));
  put_str(line, &len, cap, "\t");
  put_num(line, &len, cap, atomic_load(&frees));
  put_str(line, &len, cap, "\t");
  put_str(line, &len, cap, malloc_object);
  put_str(line, &len, cap, "\t");
  put_str(line, &len, cap, exe);
  line[len++] = '\n';

  const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t ignored = write(fd, line, len);
  (void)ignored;
  close(fd);
}

__attribute__((constructor)) static void probe_start(void) {
  preload_resolve();
  find_malloc_object();
  write_record("start");
}

__attribute__((destructor)) static void probe_exit(void) { write_record("exit"); }
