// C++ operator new/delete in every form. A failed new calls the installed new-handler and
// retries; with no handler it throws std::bad_alloc (nothrow forms return nullptr).
#include <new>

#include "core/alloc_inline.h"

using namespace heapscope;

namespace {

HS_TEXT HS_NOINLINE void* new_slow(size_t size, size_t alignment, bool nothrow) {
  for (;;) {
    void* p =
        alignment <= kMinAlign ? malloc_impl(size) : heap_malloc_aligned(tls_heap, size, alignment);
    if (p != nullptr) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) {
      if (nothrow) return nullptr;
      throw std::bad_alloc();
    }
    if (nothrow) {
      try {
        handler();
      } catch (...) {
        return nullptr;
      }
    } else {
      handler();
    }
  }
}

HS_ALWAYS_INLINE void* new_impl(size_t size) {
  void* p = malloc_impl(size);
  return HS_LIKELY(p != nullptr) ? p : new_slow(size, kMinAlign, false);
}

HS_ALWAYS_INLINE void* new_aligned(size_t size, std::align_val_t alignment, bool nothrow) {
  size_t align = static_cast<size_t>(alignment);
  if (!is_valid_alignment(align)) {
    if (nothrow) return nullptr;
    throw std::bad_alloc();
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
HS_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept { free_impl(p); }
HS_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept { free_impl(p); }
HS_EXPORT void operator delete(void* p, std::align_val_t) noexcept { free_impl(p); }
HS_EXPORT void operator delete[](void* p, std::align_val_t) noexcept { free_impl(p); }
HS_EXPORT void operator delete(void* p, size_t, std::align_val_t) noexcept { free_impl(p); }
HS_EXPORT void operator delete[](void* p, size_t, std::align_val_t) noexcept { free_impl(p); }
HS_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  free_impl(p);
}
HS_EXPORT void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  free_impl(p);
}
