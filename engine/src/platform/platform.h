// The platform contract: every OS call the engine makes goes through these functions, one
// implementation file per OS (platform_linux.cc today). None of them may allocate.
#pragma once

#include <stddef.h>
#include <stdint.h>

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
// Returns the pages to the OS at once (RSS falls); they read as zero when touched again.
void purge(void* addr, size_t size);
size_t page_size();

// Monotonic milliseconds, cheap (coarse clock).
int64_t now_ms();
// 64 bits from the kernel's entropy source (getrandom); falls back to time and address bits.
uint64_t random_u64();

// Writes all of `len` bytes to `fd`, retrying on EINTR; errors are ignored.
void write_all(int fd, const char* data, size_t len);
// A close-on-exec duplicate of fd (numbered high, out of the program's way), or -1.
int duplicate_fd(int fd);
// Looks `name` up in the process environment without allocating; nullptr when absent.
const char* get_env(const char* name);
// Resident set size of this process in bytes (from /proc), or 0 when unknown.
size_t resident_bytes();

// A per-thread identity that is unique among live threads and cheap to read.
inline uintptr_t thread_id() { return reinterpret_cast<uintptr_t>(__builtin_thread_pointer()); }

// Registers `on_thread_exit(value)` to run when a thread that called set_thread_value exits.
bool thread_exit_key_create(void (*on_thread_exit)(void*));
void set_thread_value(void* value);

// Registers fork handlers (prepare runs before fork in the parent; parent/child after).
void at_fork(void (*prepare)(), void (*parent)(), void (*child)());
// Gives up the processor (spin-lock back-off).
void yield();

}  // namespace heapscope::os
