// The hs_* entry points: thin wrappers over the inlined fast paths with the C library's
// argument checks and errno rules.
#include "alloc_inline.h"

using namespace heapscope;

extern "C" {

void* hs_malloc(size_t size) { return malloc_impl(size); }

void* hs_zalloc(size_t size) { return heap_zalloc_aligned(tls_heap, size, kMinAlign); }

void* hs_calloc(size_t count, size_t size) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return heap_zalloc_aligned(tls_heap, total, kMinAlign);
}

void* hs_realloc(void* p, size_t new_size) { return realloc_impl(p, new_size, kMinAlign, false); }

void* hs_reallocarray(void* p, size_t count, size_t size) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return realloc_impl(p, total, kMinAlign, false);
}

void hs_free(void* p) { free_impl(p); }

void hs_free_sized(void* p, size_t size) {
  (void)size;
  free_impl(p);
}

size_t hs_usable_size(const void* p) { return usable_size_impl(p); }

// ---- aligned ----------------------------------------------------------------------------------
void* hs_malloc_aligned(size_t size, size_t alignment) {
  if (!is_valid_alignment(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return heap_malloc_aligned(tls_heap, size, alignment);
}

void* hs_zalloc_aligned(size_t size, size_t alignment) {
  if (!is_valid_alignment(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return heap_zalloc_aligned(tls_heap, size, alignment);
}

void* hs_calloc_aligned(size_t count, size_t size, size_t alignment) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return hs_zalloc_aligned(total, alignment);
}

void* hs_realloc_aligned(void* p, size_t new_size, size_t alignment) {
  if (!is_valid_alignment(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return realloc_impl(p, new_size, alignment, false);
}

int hs_posix_memalign(void** out, size_t alignment, size_t size) {
  if (!is_valid_alignment(alignment) || alignment < sizeof(void*)) return EINVAL;
  int saved = errno;
  void* p = heap_malloc_aligned(tls_heap, size, alignment);
  errno = saved;  // posix_memalign reports through its result, not errno
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* hs_aligned_alloc(size_t alignment, size_t size) { return hs_malloc_aligned(size, alignment); }

void* hs_memalign(size_t alignment, size_t size) { return hs_malloc_aligned(size, alignment); }

void* hs_valloc(size_t size) { return heap_malloc_aligned(tls_heap, size, os::page_size()); }

void* hs_pvalloc(size_t size) {
  size_t page = os::page_size();
  if (size > kMaxAllocSize) {
    errno = ENOMEM;
    return nullptr;
  }
  size_t rounded = (size + page - 1) & ~(page - 1);
  return heap_malloc_aligned(tls_heap, rounded == 0 ? page : rounded, page);
}

// ---- zeroing / expanding -----------------------------------------------------------------------
void* hs_rezalloc(void* p, size_t new_size) { return realloc_impl(p, new_size, kMinAlign, true); }

void* hs_recalloc(void* p, size_t count, size_t size) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return realloc_impl(p, total, kMinAlign, true);
}

void* hs_rezalloc_aligned(void* p, size_t new_size, size_t alignment) {
  if (!is_valid_alignment(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return realloc_impl(p, new_size, alignment, true);
}

void* hs_recalloc_aligned(void* p, size_t count, size_t size, size_t alignment) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return hs_rezalloc_aligned(p, total, alignment);
}

void* hs_expand(void* p, size_t new_size) {
  if (p == nullptr) return nullptr;
  size_t usable = usable_size_impl(p);
  return new_size <= usable ? p : nullptr;
}

// ---- first-class heaps -------------------------------------------------------------------------
struct hs_heap_s {};  // opaque to callers; the pointer is an engine Heap

static Heap* to_heap(hs_heap_t* heap) { return reinterpret_cast<Heap*>(heap); }

hs_heap_t* hs_heap_new(void) {
  Heap* owner = thread_heap_init();
  if (owner == nullptr) return nullptr;
  Heap* heap = heap_struct_alloc();
  if (heap == nullptr) return nullptr;
  heap_init(heap, owner->td, false);
  heap->user_next = owner->td->user_heaps;
  owner->td->user_heaps = heap;
  registry_add(heap);
  return reinterpret_cast<hs_heap_t*>(heap);
}

static bool unlink_user_heap(Heap* heap) {
  if (heap == nullptr || heap->is_default || heap->thread_id != os::thread_id()) {
    warning("heapscope: heap delete/destroy from a thread that does not own the heap", heap);
    return false;
  }
  for (Heap** link = &heap->td->user_heaps; *link != nullptr; link = &(*link)->user_next) {
    if (*link == heap) {
      *link = heap->user_next;
      return true;
    }
  }
  return false;
}

void hs_heap_delete(hs_heap_t* handle) {
  Heap* heap = to_heap(handle);
  if (!unlink_user_heap(heap)) return;
  heap_delete_migrate(heap);
  registry_remove(heap);
  heap_struct_free(heap);
}

void hs_heap_destroy(hs_heap_t* handle) {
  Heap* heap = to_heap(handle);
  if (!unlink_user_heap(heap)) return;
  heap_destroy_pages(heap);
  registry_remove(heap);
  heap_struct_free(heap);
}

hs_heap_t* hs_heap_get_default(void) { return reinterpret_cast<hs_heap_t*>(thread_heap_init()); }

void* hs_heap_malloc(hs_heap_t* heap, size_t size) { return heap_malloc(to_heap(heap), size); }

void* hs_heap_zalloc(hs_heap_t* heap, size_t size) {
  return heap_zalloc_aligned(to_heap(heap), size, kMinAlign);
}

void* hs_heap_calloc(hs_heap_t* heap, size_t count, size_t size) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return heap_zalloc_aligned(to_heap(heap), total, kMinAlign);
}

void* hs_heap_realloc(hs_heap_t* handle, void* p, size_t new_size) {
  if (p == nullptr) return heap_malloc(to_heap(handle), new_size);
  if (new_size == 0) {
    free_impl(p);
    return nullptr;
  }
  size_t usable = usable_size_impl(p);
  if (new_size <= usable && new_size >= usable / 2) return p;
  void* q = heap_malloc(to_heap(handle), new_size);
  if (q == nullptr) return nullptr;
  memcpy(q, p, usable < new_size ? usable : new_size);
  free_impl(p);
  return q;
}

void* hs_heap_malloc_aligned(hs_heap_t* heap, size_t size, size_t alignment) {
  if (!is_valid_alignment(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return heap_malloc_aligned(to_heap(heap), size, alignment);
}

int hs_heap_contains(const hs_heap_t* heap, const void* p) {
  const Page* page = page_of(p);
  if (page == nullptr || page->block_size == 0) return 0;
  return __atomic_load_n(&page->heap, __ATOMIC_RELAXED) == reinterpret_cast<const Heap*>(heap);
}

int hs_is_in_heap_region(const void* p) { return page_of(p) != nullptr; }

void hs_collect(int force) {
  Heap* heap = tls_heap;
  if (heap == &g_empty_heap) {
    if (force) huge_cache_trim(true);
    return;
  }
  heap_release_all(heap);
  if (force) reclaim_all_abandoned(heap->td);
  purge_due(heap->td, true);
}

int hs_version(void) { return 100; }

}  // extern "C"
