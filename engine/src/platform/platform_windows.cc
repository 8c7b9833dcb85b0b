// Windows implementation of the platform contract (platform.h), for MinGW-w64. Decisions and
// what differs from Linux are in engine/docs/platforms.md ("Windows"). Nothing here calls the
// C runtime's allocator: Win32 calls that need memory take it from the process heap (ntdll's
// RtlAllocateHeap), which never reaches malloc.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// windows.h first: these headers use its types.
#include <bcrypt.h>
#include <io.h>
#include <psapi.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

namespace heapscope::os {

namespace {

void* reserve_commit(void* at, size_t size) {
  return VirtualAlloc(at, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

// The contract's descriptors are ints; Windows handles fit (64-bit Windows keeps handles to
// 32 significant bits so 32- and 64-bit processes can share them), and INVALID_HANDLE_VALUE
// is -1 as the contract's failure value. 0, 1 and 2 are never kernel handles (those are
// multiples of 4): they name the standard streams, as the engine writes reports to fd 2, and
// mean the C runtime's descriptors 0-2 (the handles behind the program's stdin/stdout/stderr,
// so the engine's reports and the program's stdio land in one stream, in order); the
// process's standard handles when the runtime has none.
HANDLE to_handle(int fd) {
  if (fd >= 0 && fd <= 2) {
    auto crt = reinterpret_cast<HANDLE>(_get_osfhandle(fd));
    if (crt != INVALID_HANDLE_VALUE && crt != nullptr && crt != reinterpret_cast<HANDLE>(-2)) {
      return crt;
    }
    static const DWORD kStandard[] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
    return GetStdHandle(kStandard[fd]);
  }
  return LongToHandle(fd);
}

int from_handle(HANDLE handle) {
  return handle == INVALID_HANDLE_VALUE ? -1 : static_cast<int>(HandleToLong(handle));
}

// Paths arrive as UTF-8; the wide API takes any path the file system does. False when the
// path does not fit the stack buffer (longer paths are refused rather than truncated).
constexpr int kWidePathChars = 1024;
bool to_wide(const char* path, wchar_t (&out)[kWidePathChars]) {
  return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, out, kWidePathChars) > 0;
}

int create_file(const char* path, DWORD access, DWORD disposition) {
  wchar_t wide[kWidePathChars];
  if (!to_wide(path, wide)) return -1;
  // Not inheritable (the default security attributes): the close-on-exec of the contract.
  HANDLE handle = CreateFileW(wide, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                              nullptr, disposition, FILE_ATTRIBUTE_NORMAL, nullptr);
  return from_handle(handle);
}

// Whether [addr, addr + size) lies inside the reservation that starts at `base` and is reserved
// but not committed (a tail an earlier shrink gave back), so it can be committed in place.
bool reserved_tail_free(void* base, void* addr, size_t size) {
  auto* p = static_cast<char*>(addr);
  char* end = p + size;
  while (p < end) {
    MEMORY_BASIC_INFORMATION info;
    if (VirtualQuery(p, &info, sizeof info) == 0) return false;
    if (info.AllocationBase != base || info.State != MEM_RESERVE) return false;
    p = static_cast<char*>(info.BaseAddress) + info.RegionSize;
  }
  return true;
}

}  // namespace

// VirtualAlloc hands out 64 KiB-aligned reservations and cannot release part of one, so the
// Linux way (over-map, trim both ends) does not work: reserve size + alignment to find an
// aligned address, release it all, and reserve exactly there. Another thread can take that
// range in between; then retry. Commit is at once (large pages never: they need a privilege
// and cannot be decommitted), so the memory counts against the commit limit as on Linux
// without overcommit, and absurd requests fail here rather than fault later.
void* map_aligned(size_t size, size_t alignment) {
  if (map_fault_due()) return nullptr;
  void* direct = reserve_commit(nullptr, size);
  if (direct == nullptr) return nullptr;
  if ((reinterpret_cast<uintptr_t>(direct) & (alignment - 1)) == 0) return direct;
  VirtualFree(direct, 0, MEM_RELEASE);
  size_t padded = size + alignment;
  if (padded < size) return nullptr;
  for (int attempt = 0; attempt < 16; ++attempt) {
    void* probe = VirtualAlloc(nullptr, padded, MEM_RESERVE, PAGE_NOACCESS);
    if (probe == nullptr) return nullptr;
    uintptr_t aligned = (reinterpret_cast<uintptr_t>(probe) + alignment - 1) & ~(alignment - 1);
    VirtualFree(probe, 0, MEM_RELEASE);
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address computed from the probe.
    if (void* memory = reserve_commit(reinterpret_cast<void*>(aligned), size)) return memory;
  }
  return nullptr;
}

// A reservation is released whole from its base; a tail (the contract allows unmapping one) is
// decommitted and its address space stays reserved until the base goes. File views are
// unmapped.
void unmap(void* addr, size_t size) {
  MEMORY_BASIC_INFORMATION info;
  if (VirtualQuery(addr, &info, sizeof info) == 0) return;
  if (info.Type == MEM_MAPPED) {
    UnmapViewOfFile(addr);
  } else if (info.AllocationBase == addr) {
    VirtualFree(addr, 0, MEM_RELEASE);
  } else {
    VirtualFree(addr, size, MEM_DECOMMIT);
  }
}

bool remap_moves_joined_mappings() { return false; }

// Windows has no mremap: pages cannot move to another address range. Shrinking decommits the
// tail; growing in place commits what follows when it is the mapping's own reserved tail (left
// by an earlier shrink); a move onto `target` always fails, so the callers copy.
void* remap(void* addr, size_t old_size, size_t new_size, void* target) {
  if (target != nullptr) return nullptr;
  if (new_size <= old_size) {
    if (new_size < old_size)
      VirtualFree(static_cast<char*>(addr) + new_size, old_size - new_size, MEM_DECOMMIT);
    return addr;
  }
  char* tail = static_cast<char*>(addr) + old_size;
  if (!reserved_tail_free(addr, tail, new_size - old_size)) return nullptr;
  if (VirtualAlloc(tail, new_size - old_size, MEM_COMMIT, PAGE_READWRITE) == nullptr)
    return nullptr;
  return addr;
}

// Decommitting frees the physical pages at once (the working set falls); committing again
// right away makes them demand-zero, so they read as zero when next touched, as the contract
// says, and no caller needs to commit before reuse. The commit charge is kept throughout. The
// recommit can only fail if another process takes the commit just given back; the pages would
// then fault on the next touch, so that is fatal here rather than a crash later.
void purge(void* addr, size_t size) {
  if (!VirtualFree(addr, size, MEM_DECOMMIT)) return;
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (VirtualAlloc(addr, size, MEM_COMMIT, PAGE_READWRITE) != nullptr) return;
    Sleep(1);
  }
  static const char kMessage[] = "heapscope: cannot recommit purged memory (commit limit)\n";
  write_all(2, kMessage, sizeof kMessage - 1);
  abort();
}

// Large pages come only to mappings made for them (MEM_LARGE_PAGES), never to these.
void advise_huge_pages(void* /*addr*/, size_t /*size*/, bool /*wanted*/) {}

bool protect(void* addr, size_t size, bool accessible) {
  DWORD old_protection;
  return VirtualProtect(addr, size, accessible ? PAGE_READWRITE : PAGE_NOACCESS, &old_protection) !=
         0;
}

void* map_pages(size_t size) {
  if (map_fault_due()) return nullptr;
  return reserve_commit(nullptr, size);
}

// Without mremap the contents are copied when the mapping cannot grow in place.
void* remap_pages(void* addr, size_t old_size, size_t new_size) {
  if (void* same = remap(addr, old_size, new_size, nullptr)) return same;
  void* copy = reserve_commit(nullptr, new_size);
  if (copy == nullptr) return nullptr;
  memcpy(copy, addr, old_size < new_size ? old_size : new_size);
  VirtualFree(addr, 0, MEM_RELEASE);
  return copy;
}

const void* map_file(const char* path, size_t min_size, size_t* size) {
  int fd = create_file(path, GENERIC_READ, OPEN_EXISTING);
  if (fd < 0) return nullptr;
  HANDLE file = to_handle(fd);
  LARGE_INTEGER length;
  const void* view = nullptr;
  if (GetFileSizeEx(file, &length) && length.QuadPart > 0 &&
      static_cast<uint64_t>(length.QuadPart) >= min_size) {
    HANDLE mapping = CreateFileMappingW(file, nullptr, PAGE_READONLY, 0, 0, nullptr);
    if (mapping != nullptr) {
      view = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
      CloseHandle(mapping);  // the view keeps the mapping object
    }
  }
  CloseHandle(file);
  if (view == nullptr) return nullptr;
  *size = static_cast<size_t>(length.QuadPart);
  return view;
}

size_t page_size() {
  static size_t cached = 0;
  if (cached == 0) {
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    cached = info.dwPageSize;
  }
  return cached;
}

int64_t now_ms() { return static_cast<int64_t>(GetTickCount64()); }

int64_t realtime_ns() {
  FILETIME now;
  GetSystemTimePreciseAsFileTime(&now);
  // 100 ns ticks since 1601-01-01; the Unix epoch is 11644473600 s later.
  uint64_t ticks = (static_cast<uint64_t>(now.dwHighDateTime) << 32) | now.dwLowDateTime;
  return static_cast<int64_t>(ticks - 116444736000000000ULL) * 100;
}

uint64_t random_u64() {
  uint64_t value = 0;
  if (BCryptGenRandom(nullptr, reinterpret_cast<PUCHAR>(&value), sizeof value,
                      BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0) {
    return value;
  }
  LARGE_INTEGER counter;
  QueryPerformanceCounter(&counter);
  return static_cast<uint64_t>(counter.QuadPart) ^ (uint64_t{GetCurrentThreadId()} << 32) ^
         reinterpret_cast<uintptr_t>(&value);
}

int open_for_write(const char* path) { return create_file(path, GENERIC_WRITE, CREATE_ALWAYS); }

int open_for_read(const char* path) { return create_file(path, GENERIC_READ, OPEN_EXISTING); }

int open_exclusive(const char* path, bool* exists) {
  int fd = create_file(path, GENERIC_WRITE, CREATE_NEW);
  *exists =
      fd < 0 && (GetLastError() == ERROR_FILE_EXISTS || GetLastError() == ERROR_ALREADY_EXISTS);
  return fd;
}

long read_some(int fd, void* data, size_t len) {
  DWORD chunk = len > 0x40000000 ? 0x40000000 : static_cast<DWORD>(len);
  DWORD got = 0;
  if (ReadFile(to_handle(fd), data, chunk, &got, nullptr)) return static_cast<long>(got);
  return GetLastError() == ERROR_BROKEN_PIPE ? 0 : -1;  // a closed pipe is its end of file
}

bool write_all(int fd, const void* data, size_t len) {
  HANDLE handle = to_handle(fd);
  const auto* p = static_cast<const char*>(data);
  while (len > 0) {
    DWORD chunk = len > 0x40000000 ? 0x40000000 : static_cast<DWORD>(len);
    DWORD written = 0;
    if (!WriteFile(handle, p, chunk, &written, nullptr) || written == 0) return false;
    p += written;
    len -= written;
  }
  return true;
}

bool close_fd(int fd) { return CloseHandle(to_handle(fd)) != 0; }

int duplicate_fd(int fd) {
  HANDLE copy = nullptr;
  HANDLE self = GetCurrentProcess();
  if (!DuplicateHandle(self, to_handle(fd), self, &copy, 0, FALSE, DUPLICATE_SAME_ACCESS)) {
    return -1;
  }
  return from_handle(copy);
}

// The C runtime's narrow environment (what getenv reads, kept current by putenv), searched in
// place as on Linux. A program entered through wmain may have none: then nothing is found.
const char* get_env(const char* name) {
  char** env = _environ;
  if (env == nullptr) return nullptr;
  size_t len = strlen(name);
  for (; *env != nullptr; ++env) {
    if (strncmp(*env, name, len) == 0 && (*env)[len] == '=') return *env + len + 1;
  }
  return nullptr;
}

long process_id() { return static_cast<long>(GetCurrentProcessId()); }

const char* running_executable_file() { return nullptr; }

size_t executable_path(char* out, size_t capacity) {
  if (capacity == 0) return 0;
  wchar_t wide[kWidePathChars];
  DWORD n = GetModuleFileNameW(nullptr, wide, kWidePathChars);
  if (n == 0 || n >= static_cast<DWORD>(kWidePathChars)) return 0;  // possibly truncated
  int bytes =
      WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, static_cast<int>(capacity), nullptr, nullptr);
  return bytes > 0 ? static_cast<size_t>(bytes - 1) : 0;  // bytes counts the NUL
}

// The working set: the resident pages Windows charges to the process.
size_t resident_bytes() {
  PROCESS_MEMORY_COUNTERS counters;
  if (!K32GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)) return 0;
  return counters.WorkingSetSize;
}

uintptr_t mapping_end(uintptr_t address) {
  MEMORY_BASIC_INFORMATION info;
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the address asked about.
  if (VirtualQuery(reinterpret_cast<const void*>(address), &info, sizeof info) == 0) return 0;
  if (info.State != MEM_COMMIT) return 0;
  return reinterpret_cast<uintptr_t>(info.BaseAddress) + info.RegionSize;
}

// The x64 unwinder reads the images' unwind tables (.pdata/.xdata, which GCC emits for every
// function), so frames of code built without frame pointers are walked too. Skips its own frame;
// allocates nothing.
uint32_t unwind_stack(uintptr_t* pcs, uint32_t max_depth) {
  if (max_depth > 0xffff) max_depth = 0xffff;
  return RtlCaptureStackBackTrace(1, max_depth, reinterpret_cast<void**>(pcs), nullptr);
}

// Thread exit: a fiber-local storage slot with a callback. Windows calls it, on the exiting
// thread, for every thread whose slot holds a value, whoever created the thread, and without
// the loader lock (a TLS callback or DllMain runs under it, where our teardown's spin locks
// could wait on a thread that waits for the loader). See engine/docs/platforms.md.
namespace {
DWORD g_exit_slot = FLS_OUT_OF_INDEXES;
void (*g_on_thread_exit)(void*) = nullptr;
void WINAPI run_thread_exit(void* value) {
  if (value != nullptr) g_on_thread_exit(value);
}
}  // namespace

bool thread_exit_key_create(void (*on_thread_exit)(void*)) {
  g_on_thread_exit = on_thread_exit;
  g_exit_slot = FlsAlloc(on_thread_exit != nullptr ? run_thread_exit : nullptr);
  return g_exit_slot != FLS_OUT_OF_INDEXES;
}

void set_thread_value(void* value) {
  if (g_exit_slot != FLS_OUT_OF_INDEXES) FlsSetValue(g_exit_slot, value);
}

// Windows has no fork: nothing to prepare for.
void at_fork(void (*)(), void (*)(), void (*)()) {}

void yield() { SwitchToThread(); }
void sleep_ms(int64_t ms) { Sleep(static_cast<DWORD>(ms)); }
// No background purger on Windows (the purge_thread option is ignored there).
bool start_background_thread(void (*)(), const char*) { return false; }

// A PE image binds each import to one named DLL: there is no search order in which the engine
// comes first and another definition after it (a program overrides malloc by linking the
// engine statically, which leaves the C runtime's definitions unreachable by name).
void* next_definition(const char*) { return nullptr; }

// The C++ runtime as a DLL (MinGW's libstdc++-6.dll), when the program loaded one.
void* cxx_runtime_definition(const char* name) {
  HMODULE runtime = GetModuleHandleW(L"libstdc++-6.dll");
  if (runtime == nullptr) return nullptr;
  return reinterpret_cast<void*>(GetProcAddress(runtime, name));
}

}  // namespace heapscope::os
