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
// requests come from a static bootstrap buffer.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void* (*real_malloc)(size_t);
static void (*real_free)(void*);
static void* (*real_calloc)(size_t, size_t);
static void* (*real_realloc)(void*, size_t);
static int (*real_posix_memalign)(void**, size_t, size_t);
static void* (*real_aligned_alloc)(size_t, size_t);
static void* (*real_memalign)(size_t, size_t);
static void* (*real_valloc)(size_t);

static _Alignas(64) char boot[1 << 14];
static size_t boot_used;
static int resolving;

static atomic_ulong allocs;
static atomic_ulong frees;
static char malloc_object[PATH_MAX];

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
  real_free = (void (*)(void*))dlsym(RTLD_NEXT, "free");
  real_calloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  real_realloc = (void* (*)(void*, size_t))dlsym(RTLD_NEXT, "realloc");
  real_posix_memalign = (int (*)(void**, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
  real_memalign = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
  real_valloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "valloc");
  real_malloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "malloc");  // last: the "ready" flag
  resolving = 0;
}

// --- counting wrappers ------------------------------------------------------------------------

void* malloc(size_t n) {
  if (real_malloc == NULL) {
    resolve();
    if (real_malloc == NULL) return boot_alloc(n);
  }
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return real_malloc(n);
}

void free(void* p) {
  if (p == NULL || is_boot(p)) return;
  if (real_free == NULL) resolve();
  atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
  real_free(p);
}

void* calloc(size_t n, size_t size) {
  if (real_malloc == NULL) {
    resolve();
    if (real_malloc == NULL) return boot_alloc(n * size);  // the static buffer is zeroed
  }
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return real_calloc(n, size);
}

void* realloc(void* old, size_t n) {
  if (real_malloc == NULL) resolve();
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  if (is_boot(old)) {
    void* p = real_malloc(n);
    const size_t room = (size_t)(boot + sizeof boot - (const char*)old);
    if (p != NULL) memcpy(p, old, n < room ? n : room);
    return p;
  }
  return real_realloc(old, n);
}

int posix_memalign(void** out, size_t align, size_t n) {
  if (real_malloc == NULL) resolve();
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return real_posix_memalign(out, align, n);
}

void* aligned_alloc(size_t align, size_t n) {
  if (real_malloc == NULL) resolve();
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return real_aligned_alloc(align, n);
}

void* memalign(size_t align, size_t n) {
  if (real_malloc == NULL) resolve();
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return real_memalign(align, n);
}

void* valloc(size_t n) {
  if (real_malloc == NULL) resolve();
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  return real_valloc(n);
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
    address = (void*)real_malloc;
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
  resolve();
  find_malloc_object();
  write_record("start");
}

__attribute__((destructor)) static void probe_exit(void) { write_record("exit"); }
