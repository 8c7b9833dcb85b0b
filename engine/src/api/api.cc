// The hs_* entry points: thin wrappers over the inlined fast paths with the C library's
// argument checks and errno rules.
#include "core/alloc_inline.h"
#include "core/idle_owner.h"
#include "core/thread.h"

using namespace heapscope;

extern "C" {

HS_TEXT void* hs_malloc(size_t size) { return malloc_impl(size); }

HS_TEXT void* hs_zalloc(size_t size) { return heap_zalloc_aligned(tls_heap, size, kMinAlign); }

HS_TEXT void* hs_calloc(size_t count, size_t size) { return calloc_impl(count, size); }

HS_TEXT void* hs_realloc(void* p, size_t new_size) {
  return realloc_impl(p, new_size, kMinAlign, false);
}

HS_TEXT void* hs_reallocarray(void* p, size_t count, size_t size) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return realloc_impl(p, total, kMinAlign, false);
}

HS_TEXT void hs_free(void* p) { free_impl(p); }

HS_TEXT void hs_free_sized(void* p, size_t size) {
  (void)size;
  free_impl(p);
}

HS_TEXT size_t hs_usable_size(const void* p) { return usable_size_impl(p); }

// ---- aligned ----------------------------------------------------------------------------------
HS_TEXT void* hs_malloc_aligned(size_t size, size_t alignment) {
  return malloc_aligned_impl(size, alignment);
}

HS_TEXT void* hs_zalloc_aligned(size_t size, size_t alignment) {
  if (!is_valid_alignment(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return heap_zalloc_aligned(tls_heap, size, alignment);
}

HS_TEXT void* hs_calloc_aligned(size_t count, size_t size, size_t alignment) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return hs_zalloc_aligned(total, alignment);
}

HS_TEXT void* hs_realloc_aligned(void* p, size_t new_size, size_t alignment) {
  if (!is_valid_alignment(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return realloc_impl(p, new_size, alignment, false);
}

HS_TEXT int hs_posix_memalign(void** out, size_t alignment, size_t size) {
  return posix_memalign_impl(out, alignment, size);
}

HS_TEXT void* hs_aligned_alloc(size_t alignment, size_t size) {
  return hs_malloc_aligned(size, alignment);
}

HS_TEXT void* hs_memalign(size_t alignment, size_t size) {
  return hs_malloc_aligned(size, alignment);
}

HS_TEXT void* hs_valloc(size_t size) {
  return heap_malloc_aligned(tls_heap, size, os::page_size());
}

HS_TEXT void* hs_pvalloc(size_t size) {
  size_t page = os::page_size();
  if (size > kMaxAllocSize) {
    errno = ENOMEM;
    return nullptr;
  }
  size_t rounded = (size + page - 1) & ~(page - 1);
  return heap_malloc_aligned(tls_heap, rounded == 0 ? page : rounded, page);
}

// ---- zeroing / expanding -----------------------------------------------------------------------
HS_TEXT void* hs_rezalloc(void* p, size_t new_size) {
  return realloc_impl(p, new_size, kMinAlign, true);
}

HS_TEXT void* hs_recalloc(void* p, size_t count, size_t size) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return realloc_impl(p, total, kMinAlign, true);
}

HS_TEXT void* hs_rezalloc_aligned(void* p, size_t new_size, size_t alignment) {
  if (!is_valid_alignment(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return realloc_impl(p, new_size, alignment, true);
}

HS_TEXT void* hs_recalloc_aligned(void* p, size_t count, size_t size, size_t alignment) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return hs_rezalloc_aligned(p, total, alignment);
}

HS_TEXT void* hs_expand(void* p, size_t new_size) {
  if (events_intercept()) return events_expand(p, new_size);
  if (p == nullptr) return nullptr;
  size_t usable = usable_size_impl(p);
  if (new_size <= usable) {
    note_resize_in_place(p, new_size);
    return p;
  }
  return resize_without_copying(tls_heap, p, usable, new_size, false, false);
}

// ---- first-class heaps -------------------------------------------------------------------------
// hs_heap_t stays an incomplete type: the handle is an engine Heap in disguise.

static Heap* to_heap(hs_heap_t* heap) { return reinterpret_cast<Heap*>(heap); }

HS_TEXT hs_heap_t* hs_heap_new(void) {
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

HS_TEXT void hs_heap_delete(hs_heap_t* handle) {
  Heap* heap = to_heap(handle);
  if (!unlink_user_heap(heap)) return;
  OwnerSlowPath slow_path(heap);  // its pages join the thread's default heap
  heap_delete_migrate(heap);
  registry_remove(heap);
  heap_struct_free(heap);
}

HS_TEXT void hs_heap_destroy(hs_heap_t* handle) {
  Heap* heap = to_heap(handle);
  if (!unlink_user_heap(heap)) return;
  if (events_gate_open()) events_heap_destroy(heap);
  OwnerSlowPath slow_path(heap);
  heap_destroy_pages(heap);
  registry_remove(heap);
  heap_struct_free(heap);
}

HS_TEXT hs_heap_t* hs_heap_get_default(void) {
  return reinterpret_cast<hs_heap_t*>(thread_heap_init());
}

HS_TEXT void* hs_heap_malloc(hs_heap_t* heap, size_t size) {
  return heap_malloc(to_heap(heap), size);
}

HS_TEXT void* hs_heap_zalloc(hs_heap_t* heap, size_t size) {
  return heap_zalloc_aligned(to_heap(heap), size, kMinAlign);
}

HS_TEXT void* hs_heap_calloc(hs_heap_t* heap, size_t count, size_t size) {
  size_t total;
  if (mul_overflows(count, size, &total)) return nullptr;
  return heap_zalloc_aligned(to_heap(heap), total, kMinAlign);
}

HS_TEXT void* hs_heap_realloc(hs_heap_t* handle, void* p, size_t new_size) {
  return heap_realloc(to_heap(handle), p, new_size, kMinAlign, false);
}

HS_TEXT void* hs_heap_malloc_aligned(hs_heap_t* heap, size_t size, size_t alignment) {
  if (!is_valid_alignment(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return heap_malloc_aligned(to_heap(heap), size, alignment);
}

HS_TEXT int hs_heap_contains(const hs_heap_t* heap, const void* p) {
  const Page* page = page_of(p);
  if (page == nullptr || page->block_size == 0) return 0;
  return __atomic_load_n(&page->heap, __ATOMIC_RELAXED) == reinterpret_cast<const Heap*>(heap);
}

HS_TEXT int hs_is_in_heap_region(const void* p) { return page_of(p) != nullptr; }

HS_TEXT void hs_collect(int force) {
  Heap* heap = tls_heap;
  if (heap == &g_empty_heap) {
    if (force) huge_cache_trim(true);
    return;
  }
  OwnerSlowPath slow_path(heap);
  // Pages given back into this thread's segments first: frees waiting in them join the
  // collection below (else they wait for this thread's next allocation slow path).
  reclaim_returned_pages(heap->td);
  heap_release_all(heap);
  if (force) {
    reclaim_all_abandoned(heap->td);
  } else {
    reclaim_freed_into();  // remote frees left uncollected in abandoned segments
  }
  purge_due(heap->td, true);
}

HS_TEXT int hs_version(void) { return 100; }

}  // extern "C"
