// The C library's allocation functions, replaced (LD_PRELOAD or static link). Each is a thin
// shell over the same inlined fast paths as the hs_* API.
#include <malloc.h>

#include "core/alloc_inline.h"

using namespace heapscope;

#define HS_EXPORT extern "C" __attribute__((visibility("default"))) HS_TEXT

// Keeps override_thread.cc (the pthread_create wrapper) in every program that links malloc.
extern "C" HS_INTERNAL const char heapscope_thread_wrapper_anchor;
__attribute__((used)) static const char* const g_keep_thread_wrapper =
    &heapscope_thread_wrapper_anchor;

HS_EXPORT void* malloc(size_t size) { return malloc_impl(size); }
HS_EXPORT void free(void* p) { free_impl(p); }
// Not through hs_calloc and the like: the hs_* API may lie past the code every program maps
// (hot_text.ld).
HS_EXPORT void* calloc(size_t count, size_t size) { return calloc_impl(count, size); }
HS_EXPORT void* realloc(void* p, size_t size) { return realloc_impl(p, size, kMinAlign, false); }
HS_EXPORT void* reallocarray(void* p, size_t count, size_t size) {
  return hs_reallocarray(p, count, size);
}
HS_EXPORT int posix_memalign(void** out, size_t alignment, size_t size) {
  return posix_memalign_impl(out, alignment, size);
}
HS_EXPORT void* aligned_alloc(size_t alignment, size_t size) {
  return malloc_aligned_impl(size, alignment);
}
// glibc's memalign rounds an alignment that is not a power of two up to the next one (and
// treats 0 as "no alignment"); programs written against it rely on that.
HS_EXPORT void* memalign(size_t alignment, size_t size) {
  if (alignment <= kMinAlign) return malloc_impl(size);
  if (!is_valid_alignment(alignment)) {
    if (alignment > (SIZE_MAX >> 1) + 1) {
      errno = EINVAL;
      return nullptr;
    }
    alignment = size_t{1} << (64 - __builtin_clzll(alignment));
  }
  return hs_memalign(alignment, size);
}
HS_EXPORT void* valloc(size_t size) { return hs_valloc(size); }
HS_EXPORT void* pvalloc(size_t size) { return hs_pvalloc(size); }
HS_EXPORT size_t malloc_usable_size(void* p) { return usable_size_impl(p); }
HS_EXPORT void cfree(void* p) { free_impl(p); }

// glibc extras that programs call: answer sensibly instead of reaching glibc's allocator.
HS_EXPORT int malloc_trim(size_t pad) {
  (void)pad;
  hs_collect(1);
  return 1;
}
HS_EXPORT int mallopt(int param, int value) {
  (void)param;
  (void)value;
  return 1;  // accepted and ignored
}
HS_EXPORT void malloc_stats(void) { hs_stats_print(2); }
HS_EXPORT struct mallinfo2 mallinfo2(void) {
  hs_stats_t s{};
  s.size = sizeof s;
  s.version = HS_STATS_VERSION;
  hs_stats_get(&s);
  struct mallinfo2 info {};
  info.arena = s.committed_bytes;
  info.uordblks = s.allocated_bytes;
  info.fordblks = s.committed_bytes > s.allocated_bytes ? s.committed_bytes - s.allocated_bytes : 0;
  info.hblks = s.huge_count;
  return info;
}
HS_EXPORT struct mallinfo mallinfo(void) {
  struct mallinfo2 wide = mallinfo2();
  struct mallinfo info {};
  info.arena = static_cast<int>(wide.arena);
  info.uordblks = static_cast<int>(wide.uordblks);
  info.fordblks = static_cast<int>(wide.fordblks);
  info.hblks = static_cast<int>(wide.hblks);
  return info;
}
