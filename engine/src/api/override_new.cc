// C++ operator new/delete in every form. A failed new calls the installed new-handler and
// retries; with no handler it throws std::bad_alloc (nothrow forms return nullptr).
//
// The engine links no C++ runtime (engine/README.md, "Dependencies"), so what needs one comes
// from the program's: std::get_new_handler and std::__throw_bad_alloc are weak references,
// bound at load time whenever the program is C++ and has libstdc++ (or libc++) loaded, and
// otherwise looked up when a new fails (a C program that loaded C++ code later, such as a
// Python extension module). A process
// without a runtime cannot have installed a handler and never calls the throwing forms.
#include <new>

#include "core/alloc_inline.h"
#include "platform/platform.h"

namespace std {
__attribute__((weak)) new_handler get_new_handler() noexcept;
__attribute__((weak, noreturn)) void __throw_bad_alloc();
}  // namespace std

using namespace heapscope;

namespace {

// The weak reference if it was bound, else whatever the process has loaded since (both run
// only after an allocation failed: the lookup may allocate, never inside malloc).
template <typename Fn>
Fn runtime_function(Fn weak, const char* name) {
  return weak != nullptr ? weak : reinterpret_cast<Fn>(os::cxx_runtime_definition(name));
}

std::new_handler current_new_handler() {
  auto get = runtime_function(&std::get_new_handler, "_ZSt15get_new_handlerv");
  return get != nullptr ? get() : nullptr;
}

[[noreturn]] HS_NOINLINE void throw_bad_alloc() {
  auto raise = runtime_function(&std::__throw_bad_alloc, "_ZSt17__throw_bad_allocv");
  if (raise != nullptr) raise();
  // Unreachable in practice: only C++ code calls the throwing forms, and it brings a runtime.
  fatal("heapscope: operator new failed and no C++ runtime is loaded to throw std::bad_alloc");
}

// std::nothrow lives in libstdc++; the tag is empty, any instance does.
constexpr std::nothrow_t kNothrow{};

using NothrowNew = void* (*)(size_t, const std::nothrow_t&);
using NothrowAlignedNew = void* (*)(size_t, std::align_val_t, const std::nothrow_t&);

// A nothrow new with a handler installed must return nullptr when the handler throws, which
// needs a catch: the engine has no exceptions, so it defers to the C++ runtime's own nothrow
// form (next in lookup order), which calls our throwing form inside its try block. The lookup
// may allocate: this runs only after an allocation failed, never inside malloc.
template <typename Fn>
Fn next_definition(const char* name) {
  return reinterpret_cast<Fn>(os::next_definition(name));
}

HS_TEXT HS_NOINLINE void* new_slow(size_t size, size_t alignment, bool nothrow) {
  for (;;) {
    void* p =
        alignment <= kMinAlign ? malloc_impl(size) : heap_malloc_aligned(tls_heap, size, alignment);
    if (p != nullptr) return p;
    std::new_handler handler = current_new_handler();
    if (handler == nullptr) {
      if (nothrow) return nullptr;
      throw_bad_alloc();
    }
    if (nothrow) {
      if (alignment <= kMinAlign) {
        auto next = next_definition<NothrowNew>("_ZnwmRKSt9nothrow_t");
        return next != nullptr ? next(size, kNothrow) : nullptr;
      }
      auto next = next_definition<NothrowAlignedNew>("_ZnwmSt11align_val_tRKSt9nothrow_t");
      return next != nullptr ? next(size, std::align_val_t{alignment}, kNothrow) : nullptr;
    }
    handler();
  }
}

HS_ALWAYS_INLINE void* new_impl(size_t size) {
  void* p = malloc_impl(size);
  return HS_LIKELY(p != nullptr) ? p : new_slow(size, kMinAlign, false);
}

// One copy for the four aligned forms: they are rare, and inlined into each they cost 4 KiB of
// the code every program maps (platform/code_placement.h, HS_HOT_TEXT).
HS_TEXT HS_NOINLINE void* new_aligned(size_t size, std::align_val_t alignment, bool nothrow) {
  size_t align = static_cast<size_t>(alignment);
  if (!is_valid_alignment(align)) {
    if (nothrow) return nullptr;
    throw_bad_alloc();
  }
  void* p = heap_malloc_aligned(tls_heap, size, align);
  return HS_LIKELY(p != nullptr) ? p : new_slow(size, align, nothrow);
}

}  // namespace

#define HS_EXPORT __attribute__((visibility("default"))) HS_TEXT

HS_EXPORT void* operator new(size_t size) { return new_impl(size); }
HS_EXPORT void* operator new[](size_t size) { return new_impl(size); }
HS_EXPORT void* operator new(size_t size, const std::nothrow_t&) noexcept {
  void* p = malloc_impl(size);
  return p != nullptr ? p : new_slow(size, kMinAlign, true);
}
HS_EXPORT void* operator new[](size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
HS_EXPORT void* operator new(size_t size, std::align_val_t alignment) {
  return new_aligned(size, alignment, false);
}
HS_EXPORT void* operator new[](size_t size, std::align_val_t alignment) {
  return new_aligned(size, alignment, false);
}
HS_EXPORT void* operator new(size_t size, std::align_val_t alignment,
                             const std::nothrow_t&) noexcept {
  return new_aligned(size, alignment, true);
}
HS_EXPORT void* operator new[](size_t size, std::align_val_t alignment,
                               const std::nothrow_t&) noexcept {
  return new_aligned(size, alignment, true);
}

HS_EXPORT void operator delete(void* p) noexcept { free_impl(p); }
HS_EXPORT void operator delete[](void* p) noexcept { free_impl(p); }
HS_EXPORT void operator delete(void* p, size_t) noexcept { free_impl(p); }
HS_EXPORT void operator delete[](void* p, size_t) noexcept { free_impl(p); }
// The rarer forms share one body: inlined into each, the free path would cost 1 KiB more of the
// code every program maps (platform/code_placement.h, HS_HOT_TEXT).
namespace {
HS_TEXT HS_NOINLINE void delete_rare(void* p) noexcept { free_impl(p); }
}  // namespace
HS_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept { delete_rare(p); }
HS_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept { delete_rare(p); }
HS_EXPORT void operator delete(void* p, std::align_val_t) noexcept { delete_rare(p); }
HS_EXPORT void operator delete[](void* p, std::align_val_t) noexcept { delete_rare(p); }
HS_EXPORT void operator delete(void* p, size_t, std::align_val_t) noexcept { delete_rare(p); }
HS_EXPORT void operator delete[](void* p, size_t, std::align_val_t) noexcept { delete_rare(p); }
HS_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  delete_rare(p);
}
HS_EXPORT void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  delete_rare(p);
}
