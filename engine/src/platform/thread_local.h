// The engine's thread-local variables, declared through these macros so each OS gets TLS that
// never calls malloc:
//   HS_THREAD_LOCAL(type, name, initial)   defines one (may be preceded by `static`)
//   HS_THREAD_LOCAL_EXTERN(type, name)     declares one defined elsewhere
// On Linux: __thread with the initial-exec model (general-dynamic TLS can call malloc).
// On Windows, MinGW GCC compiles __thread and thread_local to emulated TLS, whose first access
// on a thread calls malloc (the engine's own, when it overrides malloc: endless recursion).
// There the variables go into the image's PE TLS template (.tls section), the native TLS that
// MSVC and clang use: the loader gives every thread a copy of the template, initial values
// included, before the thread runs any code, from its own heap. engine/docs/platforms.md.
#pragma once

#if defined(_WIN32)
#include <stdint.h>

// From the MinGW C runtime (tlssup.c): the start of this image's TLS template and the index
// of its block in every thread's block array.
extern "C" char _tls_start;
extern "C" unsigned long _tls_index;

namespace heapscope::os {

// The calling thread's copy of this image's TLS template: TEB.ThreadLocalStoragePointer
// (gs:[0x58] on x86-64) points at the per-image blocks.
inline char* tls_block() {
  char** blocks;
  __asm__("mov %%gs:0x58, %0" : "=r"(blocks));
  return blocks[_tls_index];
}

// A variable placed in the TLS template. The object itself is only the template (never read or
// written after load); every access goes to the calling thread's copy at the same offset.
template <typename T>
class PeThreadLocal {
 public:
  constexpr explicit PeThreadLocal(T initial) : initial_(initial) {}
  PeThreadLocal(const PeThreadLocal&) = delete;
  PeThreadLocal& operator=(const PeThreadLocal&) = delete;

  T& get() const {
    uintptr_t offset = reinterpret_cast<uintptr_t>(this) - reinterpret_cast<uintptr_t>(&_tls_start);
    return *reinterpret_cast<T*>(tls_block() + offset);
  }
  operator T&() const { return get(); }  // NOLINT(google-explicit-constructor): reads as T
  T operator->() const { return get(); }
  PeThreadLocal& operator=(T value) {
    get() = value;
    return *this;
  }
  T operator++(int) { return get()++; }
  T operator--(int) { return get()--; }
  T& operator++() { return ++get(); }
  T& operator--() { return --get(); }

 private:
  T initial_;
};

}  // namespace heapscope::os

// The section sorts inside the template: the linker orders .tls$* by name between the C
// runtime's _tls_start (.tls) and _tls_end (.tls$ZZZ), so the suffix must sort before "ZZZ".
#define HS_THREAD_LOCAL(type, name, initial) \
  __attribute__((section(".tls$HS"))) ::heapscope::os::PeThreadLocal<type> name { initial }
#define HS_THREAD_LOCAL_EXTERN(type, name) \
  extern __attribute__((section(".tls$HS"))) ::heapscope::os::PeThreadLocal<type> name

#else

#define HS_THREAD_LOCAL(type, name, initial) \
  __thread type name __attribute__((tls_model("initial-exec"))) = initial
#define HS_THREAD_LOCAL_EXTERN(type, name) \
  extern __thread type name __attribute__((tls_model("initial-exec")))

#endif
