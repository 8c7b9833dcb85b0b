// The platform contract: every OS call the engine makes (the profiler's included) goes through
// these functions, implemented once per OS in files named *_<os>.cc (platform_linux.cc,
// modules_linux.cc; platform_windows.cc, modules_windows.cc; the build picks one OS's files).
// None of them may allocate: they run inside malloc's callers.
// engine.platform_only_os_calls fails when a raw OS call appears outside this folder.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "platform/code_placement.h"

namespace heapscope::os {

// Maps `size` bytes of read/write memory aligned to `alignment` (a power of two, at least the
// page size). Returns nullptr on failure. The memory reads as zero.
void* map_aligned(size_t size, size_t alignment);
// Unmaps memory obtained from map_aligned (or a page-aligned tail of it).
void unmap(void* addr, size_t size);
// Resizes a mapping without copying its pages: in place when `target` is nullptr (fails
// unless the address range after it is free, or when shrinking always succeeds), else
// moved onto `target`, a mapping of new_size bytes from map_aligned that it replaces. Returns
// the mapping's address, or nullptr (the old mapping is then unchanged).
void* remap(void* addr, size_t old_size, size_t new_size, void* target);
// Whether remap(addr, n, n, target) moves a range made of several adjacent mappings in one
// call (Linux 6.17 and later; not Windows, not under ThreadSanitizer). Probed once.
bool remap_moves_joined_mappings();
// Returns the pages to the OS at once (RSS falls); they read as zero when touched again.
void purge(void* addr, size_t size);
// Asks the OS to back the whole pages inside the range with transparent huge pages, or never
// to (Linux; elsewhere nothing: Windows gives large pages only to mappings made for them).
void advise_huge_pages(void* addr, size_t size, bool wanted);
// Makes whole pages of a mapping inaccessible (a guard: any access faults) or read/write again.
// False when the OS refuses (out of mapping slots, for one).
bool protect(void* addr, size_t size, bool accessible);
size_t page_size();
// Maps `size` bytes of zeroed read/write memory at any page-aligned address (no alignment
// padding, unlike map_aligned). nullptr on failure. Released with unmap(addr, size).
void* map_pages(size_t size);
// Fault injection for tests (the fault_map_every option): when n > 0, every nth call of
// map_aligned and map_pages fails as if the OS refused the memory. 0 turns it off.
void set_map_fault_interval(long n);
// For the per-OS files (map_fault.cc): true when this mapping request is one to refuse.
bool map_fault_due();
// Resizes a map_pages mapping, moving it when it cannot grow in place; the contents are
// kept without copying. Returns the new address, or nullptr (the old mapping unchanged).
void* remap_pages(void* addr, size_t old_size, size_t new_size);
// Maps the file at `path` read-only and private, whole; *size receives its length. nullptr
// when the file cannot be opened or mapped or is shorter than `min_size` bytes. Released
// with unmap(addr, *size).
const void* map_file(const char* path, size_t min_size, size_t* size);

// Monotonic milliseconds, cheap (coarse clock).
int64_t now_ms();
// Wall-clock time in nanoseconds since the Unix epoch (profile timestamps).
int64_t realtime_ns();
// 64 bits from the kernel's entropy source (getrandom); falls back to time and address bits.
uint64_t random_u64();

// Files by descriptor, without buffering or allocation. open_* return -1 on failure.
// open_for_write creates or truncates (mode 0644); both are close-on-exec.
int open_for_write(const char* path);
int open_for_read(const char* path);
// Creates `path` only if it does not exist yet (mode 0644, close-on-exec): -1 on failure, with
// *exists set when the failure was that the file is already there.
int open_exclusive(const char* path, bool* exists);
// Reads up to `len` bytes: the count read, 0 at end of file, -1 on error (EINTR retried).
long read_some(int fd, void* data, size_t len);
// Writes all of `len` bytes to `fd`, retrying on EINTR; false on the first error (callers
// that report to stderr ignore it: there is nowhere else to report to).
bool write_all(int fd, const void* data, size_t len);
// Closes fd; false when the close reported an error (a write may have been lost).
bool close_fd(int fd);
// A close-on-exec duplicate of fd (numbered high, out of the program's way), or -1.
int duplicate_fd(int fd);
// Looks `name` up in the process environment without allocating; nullptr when absent.
const char* get_env(const char* name);
// This process's id (a forked child sees its own).
long process_id();
// A path that opens the running executable's own file even if it was replaced on disk since it
// started (Linux: /proc/self/exe), or nullptr where the OS has none (Windows: the loader keeps
// an image's file from being replaced while it runs, so its module path is right).
const char* running_executable_file();
// The real path of the running executable, NUL-terminated, into `out`; its length, or 0 when
// unknown or longer than `capacity` - 1.
size_t executable_path(char* out, size_t capacity);
// Resident set size of this process in bytes (from /proc), or 0 when unknown.
size_t resident_bytes();
// The end (one past the last byte) of the memory mapping that holds `address`, or 0 when
// unknown. Used once per thread on its stack, to bound a frame-pointer walk.
uintptr_t mapping_end(uintptr_t address);

// The calling thread's return addresses from the OS's own unwinder, which needs no frame
// pointers (unwind tables), innermost first, starting with unwind_stack's caller's caller;
// how many were stored. 0 when the OS offers no unwinder that is safe inside malloc (Linux:
// glibc's backtrace loads libgcc_s and allocates): the profiler then walks frame pointers.
uint32_t unwind_stack(uintptr_t* pcs, uint32_t max_depth);

// One executable segment of a module loaded in this process. Pointers are valid only during
// the callback.
struct ModuleSegment {
  const char* path;      // absolute path of the file (for the main executable, its real path)
  const char* build_id;  // lowercase hex of the module's build ID, "" if none
  uintptr_t start;       // runtime address of the segment
  size_t size;           // its size in memory
  uint64_t file_offset;  // its offset in the file
  uintptr_t load_bias;   // runtime address minus link-time address
  bool is_main;
};
using ModuleSegmentFn = bool (*)(const ModuleSegment& segment, void* arg);
// Calls `fn` for every executable segment, main executable first, skipping the vDSO and
// nameless modules; stops when `fn` returns false. The loader's lock may be held during the
// callbacks, so they must not load modules (or allocate).
void for_each_module_segment(ModuleSegmentFn fn, void* arg);

// How many low address bits the OS may use for mappings it places itself (no address hint):
// the segment map covers that range (core/segment.h). Linux puts user mappings below 2^47 on
// x86-64 (also with 5-level paging, which needs a hint above it) and below 2^48 on AArch64
// (also with 52-bit virtual addresses, likewise); 39- and 42-bit AArch64 kernels fit inside.
// 64-bit Windows (8.1 and later) gives user space 128 TiB, below 2^47, too.
#if defined(__x86_64__)
inline constexpr unsigned kUserAddressBits = 47;
#elif defined(__aarch64__)
inline constexpr unsigned kUserAddressBits = 48;
#else
#error "heapscope: unknown architecture: say how many address bits its user mappings use"
#endif

// A per-thread identity that is unique among live threads, never 0, and cheap to read.
#if defined(_WIN32) && defined(__x86_64__)
// The thread's TEB (NtTib.Self at gs:[0x30]): __builtin_thread_pointer has no Windows form.
inline uintptr_t thread_id() {
  uintptr_t teb;
  __asm__("mov %%gs:0x30, %0" : "=r"(teb));
  return teb;
}
#else
inline uintptr_t thread_id() { return reinterpret_cast<uintptr_t>(__builtin_thread_pointer()); }
#endif

// Registers `on_thread_exit(value)` to run when a thread that called set_thread_value exits
// (nullptr: the key holds values and nothing runs at exit; a test-only setting, core/thread.cc),
// whoever created the thread. set_thread_value does nothing until a key was created.
bool thread_exit_key_create(void (*on_thread_exit)(void*));
void set_thread_value(void* value);

// Registers fork handlers (prepare runs before fork in the parent; parent/child after).
void at_fork(void (*prepare)(), void (*parent)(), void (*child)());
// Gives up the processor (spin-lock back-off).
void yield();
// Sleeps the calling thread for `ms` milliseconds (EINTR resumed).
void sleep_ms(int64_t ms);
// Starts a detached thread that runs body() with every signal blocked (a program's handlers
// never run on it), named `name` where the OS names threads. False where the OS refuses or
// the platform has no such thread (Windows). May allocate (the C library sets the thread
// up): never call it while the allocator holds a lock.
bool start_background_thread(void (*body)(), const char* name);

// The next definition of `name` after the engine's own in symbol lookup order (the one the
// engine interposes), or nullptr. May allocate: never call it from inside malloc.
void* next_definition(const char* name);
// A C++ runtime function the engine's weak reference missed: `name` in the process's global
// scope now, else in a C++ runtime library loaded since, even privately (RTLD_LOCAL, as
// Python loads extension modules); nullptr if none. May allocate, as above.
void* cxx_runtime_definition(const char* name);

}  // namespace heapscope::os
