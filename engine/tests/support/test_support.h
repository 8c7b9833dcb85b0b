// Helpers shared by the engine's tests: sanitizer-aware scaling, a seeded PRNG, content
// patterns, process RSS and an hs_stats_t snapshot.
#pragma once

#include <heapscope/heapscope.h>

#if defined(_WIN32)
// The tests' one Windows call (rss_bytes); the engine's own OS calls are in src/platform/.
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
// windows.h first: psapi.h uses its types.
#include <psapi.h>
#else
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "base/splitmix64.h"

namespace hs_test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAsan = true;
#else
inline constexpr bool kAsan = false;
#endif
#else
inline constexpr bool kAsan = false;
#endif

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kTsan = true;
#else
inline constexpr bool kTsan = false;
#endif
#else
inline constexpr bool kTsan = false;
#endif

inline constexpr bool kSanitized = kAsan || kTsan;

// An unoptimized build (the debug preset: -O0, with the engine's expensive invariant checks on
// every call) runs each op several times slower than Release.
#ifdef NDEBUG
inline constexpr bool kUnoptimized = false;
#else
inline constexpr bool kUnoptimized = true;
#endif

// True when the test runs under a user-mode emulator (a cross build's CTest sets
// HS_TEST_UNDER_EMULATOR=1, ci/cross-test.sh): /proc then reports the emulator's resident set
// (its translated code and per-thread state included), not the program's.
inline bool under_emulator() {
  const char* value = std::getenv("HS_TEST_UNDER_EMULATOR");
  return value != nullptr && value[0] == '1';
}

// Iteration counts: n normally, n/8 (at least 1) under a sanitizer, n/4 in an unoptimized build
// or under an emulator (emulated threads run 10-30x slower); HS_TEST_SCALE=k multiplies (the
// `slow` CTest entries run the stress suites with a larger scale).
inline size_t scaled(size_t n) {
  size_t scale = 1;
  if (const char* s = std::getenv("HS_TEST_SCALE"); s != nullptr && std::atoi(s) > 0) {
    scale = static_cast<size_t>(std::atoi(s));
  }
  size_t v = kSanitized ? n / 8 : (kUnoptimized || under_emulator()) ? n / 4 : n;
  return (v == 0 ? 1 : v) * scale;
}

// The project's one PRNG (header-only; between(lo, hi) is inclusive and unbiased).
using SplitMix64 = heapscope::base::SplitMix64;

inline constexpr size_t kKiB = 1024;
inline constexpr size_t kMiB = 1024 * 1024;

inline unsigned char pattern_at(size_t i, uint64_t seed) {
  return static_cast<unsigned char>((i * 131u + seed * 7u + (i >> 9)) ^ (seed >> 8));
}

// Pattern bytes are a function of the offset alone, so any prefix of a patterned block can be
// checked after a realloc. Up to kDenseMax every byte is sampled; beyond it the first and last
// 64 bytes of every 4 KiB (enough to see a page that is shared, lost or unmapped).
inline constexpr size_t kDenseMax = 64 * kKiB;

inline bool sampled(size_t i) {
  const size_t in_page = i & 4095;
  return i < kDenseMax || in_page < 64 || in_page >= 4032;
}

template <typename F>
inline void for_sampled_bytes(size_t n, F&& f) {
  for (size_t i = 0; i < n && i < kDenseMax; ++i) f(i);
  for (size_t page = kDenseMax; page < n; page += 4096) {
    for (size_t i = page; i < page + 64 && i < n; ++i) f(i);
    for (size_t i = page + 4032; i < page + 4096 && i < n; ++i) f(i);
  }
}

// Writes the pattern on the sampled bytes of [0, n) and on its last 64 bytes.
inline void fill_pattern(void* p, size_t n, uint64_t seed) {
  auto* b = static_cast<unsigned char*>(p);
  for_sampled_bytes(n, [&](size_t i) { b[i] = pattern_at(i, seed); });
  for (size_t i = n > 64 ? n - 64 : 0; i < n; ++i) b[i] = pattern_at(i, seed);
}

// Returns the first sampled offset in [0, n) whose byte differs from the pattern, or SIZE_MAX.
inline size_t check_pattern(const void* p, size_t n, uint64_t seed) {
  const auto* b = static_cast<const unsigned char*>(p);
  size_t bad = SIZE_MAX;
  for_sampled_bytes(n, [&](size_t i) {
    if (bad == SIZE_MAX && b[i] != pattern_at(i, seed)) bad = i;
  });
  return bad;
}

// First offset in [from, to) that is not zero, or SIZE_MAX.
inline size_t first_nonzero(const void* p, size_t from, size_t to) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = from; i < to; ++i) {
    if (b[i] != 0) return i;
  }
  return SIZE_MAX;
}

// Resident set size of this process in bytes, from /proc/self/statm (on Windows: the working set).
inline size_t rss_bytes() {
#if defined(_WIN32)
  PROCESS_MEMORY_COUNTERS counters;
  if (!K32GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)) return 0;
  return counters.WorkingSetSize;
#else
  std::ifstream statm("/proc/self/statm");
  size_t total_pages = 0;
  size_t resident_pages = 0;
  statm >> total_pages >> resident_pages;
  return resident_pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
#endif
}

#if !defined(_WIN32)
// Page faults this process took so far without I/O (getrusage's minflt): a page touched for
// the first time, or again after the allocator gave it back.
inline long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}
#endif

// The OS page size.
inline size_t page_size() {
#if defined(_WIN32)
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  return info.dwPageSize;
#else
  return static_cast<size_t>(sysconf(_SC_PAGESIZE));
#endif
}

// The main thread gets its default heap before any test runs, so per-test counts of heaps and
// threads do not depend on whether an earlier test in the same process allocated.
inline const bool kMainThreadHasHeap = [] {
  hs_free(hs_malloc(1));
  return true;
}();

// Sets the purge delay and its ceiling for a scope; the previous values come back after it.
class ScopedPurgeDelays {
 public:
  ScopedPurgeDelays(long delay, long ceiling)
      : delay_(hs_option_get(hs_option_purge_delay)),
        ceiling_(hs_option_get(hs_option_purge_delay_max)) {
    hs_option_set(hs_option_purge_delay, delay);
    hs_option_set(hs_option_purge_delay_max, ceiling);
  }
  ~ScopedPurgeDelays() {
    hs_option_set(hs_option_purge_delay, delay_);
    hs_option_set(hs_option_purge_delay_max, ceiling_);
  }
  ScopedPurgeDelays(const ScopedPurgeDelays&) = delete;
  ScopedPurgeDelays& operator=(const ScopedPurgeDelays&) = delete;

 private:
  long delay_;
  long ceiling_;
};

inline hs_stats_t stats_now() {
  hs_stats_t s;
  std::memset(&s, 0, sizeof(s));
  s.size = sizeof(s);
  s.version = HS_STATS_VERSION;
  if (hs_stats_get(&s) != 0) std::abort();
  return s;
}

inline hs_stats_t heap_stats_now(const hs_heap_t* heap) {
  hs_stats_t s;
  std::memset(&s, 0, sizeof(s));
  s.size = sizeof(s);
  s.version = HS_STATS_VERSION;
  if (hs_heap_stats_get(heap, &s) != 0) std::abort();
  return s;
}

// Sets an option for one scope and restores it: tests of behaviour that depends on an option
// whose default differs between builds (check_frees is on in Debug) state the value they test.
class ScopedOption {
 public:
  ScopedOption(hs_option_t option, long value) : option_(option), saved_(hs_option_get(option)) {
    hs_option_set(option, value);
  }
  ~ScopedOption() { hs_option_set(option_, saved_); }
  ScopedOption(const ScopedOption&) = delete;
  ScopedOption& operator=(const ScopedOption&) = delete;

 private:
  hs_option_t option_;
  long saved_;
};

// Hides a value from the optimizer (keeps the compiler from folding huge constant sizes).
template <typename T>
inline T opaque(T v) {
  asm volatile("" : "+r"(v));
  return v;
}

inline bool is_aligned(const void* p, size_t alignment) {
  return (reinterpret_cast<uintptr_t>(p) & (alignment - 1)) == 0;
}

// Runs `body` on a fresh thread whose heap starts with a fresh segment: the exited threads'
// segments are adopted by this thread first, so the new one cannot inherit a used one.
template <typename Body>
void on_fresh_thread(Body body) {
  hs_collect(1);
  std::thread(body).join();
}

#if !defined(_WIN32)
// Waits for a forked child by polling, so the caller's other threads keep running meanwhile.
// A child still running after timeout_ms is killed; returns false then. *status is the
// child's wait status either way.
inline bool wait_child(pid_t pid, int* status, int timeout_ms) {
  for (int waited_ms = 0; waited_ms < timeout_ms; waited_ms += 5) {
    if (waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  waitpid(pid, status, 0);
  return false;
}
#endif

}  // namespace hs_test
