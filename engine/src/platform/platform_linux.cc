// Linux implementation of the platform contract (platform.h).
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "platform/platform.h"
#include "platform/vdso_linux.h"

extern char** environ;

namespace heapscope::os {

HS_HOT_TEXT void* map_aligned(size_t size, size_t alignment) {
  if (map_fault_due()) return nullptr;
  // Over-reserve by the alignment and trim both ends, so the result is aligned without hints.
  // No MAP_NORESERVE: the kernel's overcommit heuristic then refuses absurd sizes (a 100 GiB
  // request on a 24 GiB machine gets ENOMEM, as with glibc) instead of handing out address
  // space that faults later.
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS;
  size_t padded = size + alignment;
  if (padded < size) return nullptr;
  void* raw = mmap(nullptr, padded, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (start + alignment - 1) & ~(alignment - 1);
  if (aligned > start) munmap(raw, aligned - start);
  uintptr_t end = start + padded;
  uintptr_t used_end = aligned + size;
  if (end > used_end) munmap(reinterpret_cast<void*>(used_end), end - used_end);
  return reinterpret_cast<void*>(aligned);
}

HS_HOT_TEXT void unmap(void* addr, size_t size) { munmap(addr, size); }

// ThreadSanitizer does not intercept mremap: the range a mapping leaves keeps the shadow of
// its last accesses, and whatever is mapped there next "races" with them. Under TSan the
// resizes therefore go through the intercepted calls only (remap grows refuse, so callers
// copy; remap_pages copies).
#if defined(__SANITIZE_THREAD__)
constexpr bool kMremapVisibleToSanitizer = false;
#else
constexpr bool kMremapVisibleToSanitizer = true;
#endif

// Two adjacent pages of different protections are two mappings: older kernels refuse to move
// them in one call (EFAULT). Test-only: HEAPSCOPE_TEST_NO_JOINED_REMAP=1 answers as they do, so
// that the huge cache's whole-mapping policy runs on this kernel too.
bool remap_moves_joined_mappings() {
  static std::atomic<int> known{0};  // 0: not probed yet, 1: yes, 2: no
  int answer = known.load(std::memory_order_relaxed);
  if (answer != 0) return answer == 1;
  bool moves = false;
  const char* refused = get_env("HEAPSCOPE_TEST_NO_JOINED_REMAP");
  if (kMremapVisibleToSanitizer && (refused == nullptr || refused[0] != '1')) {
    size_t page = page_size();
    void* source =
        mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void* target =
        mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (source != MAP_FAILED && target != MAP_FAILED &&
        mprotect(static_cast<char*>(source) + page, page, PROT_READ) == 0) {
      moves = mremap(source, 2 * page, 2 * page, MREMAP_MAYMOVE | MREMAP_FIXED, target) == target;
    }
    // After a move the source range is no longer ours: another thread may map it already.
    if (source != MAP_FAILED && !moves) munmap(source, 2 * page);
    if (target != MAP_FAILED) munmap(target, 2 * page);
  }
  known.store(moves ? 1 : 2, std::memory_order_relaxed);
  return moves;
}

void* remap(void* addr, size_t old_size, size_t new_size, void* target) {
  if (!kMremapVisibleToSanitizer) {
    if (target != nullptr || new_size > old_size) return nullptr;
    if (new_size < old_size) munmap(static_cast<char*>(addr) + new_size, old_size - new_size);
    return addr;
  }
  void* moved = target == nullptr
                    ? mremap(addr, old_size, new_size, 0)
                    : mremap(addr, old_size, new_size, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  return moved == MAP_FAILED ? nullptr : moved;
}

HS_HOT_TEXT void purge(void* addr, size_t size) { madvise(addr, size, MADV_DONTNEED); }

HS_HOT_TEXT void advise_huge_pages(void* addr, size_t size, bool wanted) {
  const uintptr_t mask = page_size() - 1;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(addr) + mask) & ~mask;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(addr) + size) & ~mask;
  if (end <= begin) return;
  // Refused by a kernel built without transparent huge pages: then there is nothing to avoid.
  madvise(reinterpret_cast<void*>(begin), end - begin, wanted ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
}

bool protect(void* addr, size_t size, bool accessible) {
  return mprotect(addr, size, accessible ? PROT_READ | PROT_WRITE : PROT_NONE) == 0;
}

void* map_pages(size_t size) {
  if (map_fault_due()) return nullptr;
  void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return memory == MAP_FAILED ? nullptr : memory;
}

void* remap_pages(void* addr, size_t old_size, size_t new_size) {
  if (!kMremapVisibleToSanitizer) {
    void* copy = map_pages(new_size);
    if (copy == nullptr) return nullptr;
    memcpy(copy, addr, old_size < new_size ? old_size : new_size);
    munmap(addr, old_size);
    return copy;
  }
  void* moved = mremap(addr, old_size, new_size, MREMAP_MAYMOVE);
  return moved == MAP_FAILED ? nullptr : moved;
}

const void* map_file(const char* path, size_t min_size, size_t* size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat info;
  void* file = MAP_FAILED;
  if (fstat(fd, &info) == 0 && info.st_size > 0 && static_cast<size_t>(info.st_size) >= min_size) {
    file = mmap(nullptr, static_cast<size_t>(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  }
  close(fd);  // the mapping keeps the file
  if (file == MAP_FAILED) return nullptr;
  *size = static_cast<size_t>(info.st_size);
  return file;
}

HS_HOT_TEXT size_t page_size() {
  static size_t cached = 0;
  if (cached == 0) cached = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return cached;
}

// clock_gettime through the vDSO when there is one (vdso_linux.h), else through libc. Looked
// up once; threads racing to look it up store the same answer.
namespace {
using ClockGettime = int (*)(clockid_t, timespec*);
#if defined(__x86_64__)
constexpr char kVdsoClockGettime[] = "__vdso_clock_gettime";
#elif defined(__aarch64__)
constexpr char kVdsoClockGettime[] = "__kernel_clock_gettime";
#endif
std::atomic<ClockGettime> g_clock_gettime{nullptr};

HS_HOT_TEXT void read_clock(clockid_t clock, timespec* ts) {
  ClockGettime read = g_clock_gettime.load(std::memory_order_relaxed);
  if (__builtin_expect(read == nullptr, 0)) {
#if defined(__x86_64__) || defined(__aarch64__)
    read = reinterpret_cast<ClockGettime>(vdso_function(kVdsoClockGettime));
#endif
    if (read == nullptr) read = clock_gettime;
    g_clock_gettime.store(read, std::memory_order_relaxed);
  }
  if (read(clock, ts) != 0) clock_gettime(clock, ts);  // a clock the vDSO does not serve
}
}  // namespace

HS_HOT_TEXT int64_t now_ms() {
  timespec ts;
  read_clock(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int64_t realtime_ns() {
  timespec ts;
  read_clock(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

uint64_t random_u64() {
  uint64_t value = 0;
  if (getrandom(&value, sizeof value, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof value)) {
    return value;
  }
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(ts.tv_sec) << 32) ^
         reinterpret_cast<uintptr_t>(&value);
}

int open_for_write(const char* path) {
  return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

int open_for_read(const char* path) { return open(path, O_RDONLY | O_CLOEXEC); }

int open_exclusive(const char* path, bool* exists) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  *exists = fd < 0 && errno == EEXIST;
  return fd;
}

long process_id() { return static_cast<long>(getpid()); }

const char* running_executable_file() { return "/proc/self/exe"; }

size_t executable_path(char* out, size_t capacity) {
  if (capacity == 0) return 0;
  ssize_t n = readlink("/proc/self/exe", out, capacity - 1);
  if (n <= 0 || static_cast<size_t>(n) >= capacity - 1) return 0;  // possibly truncated
  out[n] = '\0';
  return static_cast<size_t>(n);
}

long read_some(int fd, void* data, size_t len) {
  for (;;) {
    ssize_t n = ::read(fd, data, len);
    if (n >= 0 || errno != EINTR) return static_cast<long>(n);
  }
}

bool write_all(int fd, const void* data, size_t len) {
  const auto* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool close_fd(int fd) { return close(fd) == 0; }

int duplicate_fd(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 200); }

HS_HOT_TEXT const char* get_env(const char* name) {
  if (environ == nullptr) return nullptr;
  size_t len = strlen(name);
  for (char** env = environ; *env != nullptr; ++env) {
    if (strncmp(*env, name, len) == 0 && (*env)[len] == '=') return *env + len + 1;
  }
  return nullptr;
}

size_t resident_bytes() {
  // VmRSS of status, not statm: since Linux 6.2 statm reads the per-CPU RSS counters without
  // summing them, off by up to a few hundred KiB on a busy process.
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* s = strstr(buf, "\nVmRSS:");
  if (s == nullptr) return 0;
  s += 7;
  while (*s == ' ' || *s == '\t') ++s;
  size_t kib = 0;
  while (*s >= '0' && *s <= '9') kib = kib * 10 + static_cast<size_t>(*s++ - '0');
  return kib * 1024;
}

namespace {

uintptr_t parse_hex(const char*& s) {
  uintptr_t value = 0;
  for (;; ++s) {
    char c = *s;
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return value;
    value = value * 16 + static_cast<uintptr_t>(digit);
  }
}

// One pass over /proc/self/maps, read with read(2) into a stack buffer: stdio would allocate.
uintptr_t find_mapping_end(uintptr_t address) {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[4096];
  size_t filled = 0;
  uintptr_t found = 0;
  for (;;) {
    ssize_t n = read(fd, buffer + filled, sizeof buffer - 1 - filled);
    if (n <= 0) break;
    filled += static_cast<size_t>(n);
    buffer[filled] = '\0';
    char* line = buffer;
    for (;;) {
      char* newline = line;
      while (*newline != '\0' && *newline != '\n') ++newline;
      if (*newline == '\0') break;  // partial line: keep it for the next read
      const char* s = line;
      uintptr_t start = parse_hex(s);
      uintptr_t end = *s == '-' ? parse_hex(++s) : 0;
      if (address >= start && address < end) found = end;
      line = newline + 1;
    }
    size_t rest = static_cast<size_t>(buffer + filled - line);
    for (size_t i = 0; i < rest; ++i) buffer[i] = line[i];
    filled = rest;
    if (found != 0) break;
  }
  close(fd);
  return found;
}

}  // namespace

// The file is produced a piece per read: a mapping that another thread splits, merges or moves
// meanwhile can be left out of the pass (seen under qemu-user, where a test with eight threads
// starting at once and mapping memory missed a stack in one run of five). The mapping asked
// about exists, so a miss is retried.
uintptr_t mapping_end(uintptr_t address) {
  constexpr int kPasses = 4;
  for (int pass = 0; pass < kPasses; ++pass) {
    if (uintptr_t end = find_mapping_end(address); end != 0) return end;
  }
  return 0;
}

uint32_t unwind_stack(uintptr_t*, uint32_t) { return 0; }

static pthread_key_t g_exit_key;
static bool g_exit_key_created = false;  // without it, key 0 may be another library's key

HS_HOT_TEXT bool thread_exit_key_create(void (*on_thread_exit)(void*)) {
  g_exit_key_created = pthread_key_create(&g_exit_key, on_thread_exit) == 0;
  return g_exit_key_created;
}

HS_HOT_TEXT void set_thread_value(void* value) {
  if (g_exit_key_created) pthread_setspecific(g_exit_key, value);
}

HS_HOT_TEXT void at_fork(void (*prepare)(), void (*parent)(), void (*child)()) {
  pthread_atfork(prepare, parent, child);
}

HS_HOT_TEXT void yield() { sched_yield(); }

void sleep_ms(int64_t ms) {
  timespec left{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

namespace {
void (*g_background_body)() = nullptr;  // one background thread at a time is started

void* background_entry(void*) {
  g_background_body();
  return nullptr;
}
}  // namespace

bool start_background_thread(void (*body)(), const char* name) {
  g_background_body = body;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  // The new thread inherits this mask: it then never takes a signal meant for the program.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_t thread;
  // Whichever pthread_create the program resolves (a sanitizer's interceptor must see every
  // thread; in the overriding libraries, the engine's wrapper, which numbers it like any).
  const int result = pthread_create(&thread, &attr, background_entry, nullptr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  pthread_attr_destroy(&attr);
  if (result != 0) return false;
  pthread_setname_np(thread, name);  // before this returns: whoever looks next sees it named
  return true;
}

// RTLD_NEXT searches after the object that holds this code, which is the engine's library (or
// the program the static library is linked into), as for the interposed functions.
void* next_definition(const char* name) { return dlsym(RTLD_NEXT, name); }

void* cxx_runtime_definition(const char* name) {
  if (void* found = dlsym(RTLD_DEFAULT, name)) return found;
  // RTLD_NOLOAD only finds a library already loaded; the reference it takes is kept, so what
  // it returns stays valid.
  static const char* const kRuntimes[] = {"libstdc++.so.6", "libc++abi.so.1", "libc++.so.1"};
  for (const char* soname : kRuntimes) {
    void* library = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) continue;
    if (void* found = dlsym(library, name)) return found;
  }
  return nullptr;
}

}  // namespace heapscope::os
