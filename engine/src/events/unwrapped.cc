// hs_unwrapped_*: page-granular memory straight from the OS layer, with a header just before
// the returned pointer that records the mapping (and a magic word that rejects foreign
// pointers). Available in every build: it touches no allocator state.
#include <string.h>

#include "core/common.h"
#include "heapscope/memory_events.h"
#include "platform/platform.h"

namespace {

constexpr uint64_t kMagic = 0x68737577726170ull;  // "hsuwrap"

struct Header {
  void* base;
  size_t mapped;   // bytes mapped at base
  size_t payload;  // bytes the caller asked for
  uint64_t magic;
};

Header* header_of(void* p) { return static_cast<Header*>(p) - 1; }

}  // namespace

extern "C" {

HS_TEXT void* hs_unwrapped_malloc(size_t size, size_t alignment) {
  if (alignment == 0) alignment = sizeof(void*);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  size_t page = heapscope::os::page_size();
  size_t align = alignment < alignof(Header) ? alignof(Header) : alignment;
  // The header fits in front of the payload at the first aligned offset past it.
  size_t offset = (sizeof(Header) + align - 1) & ~(align - 1);
  if (size > SIZE_MAX - offset - page) return nullptr;
  size_t mapped = (offset + size + page - 1) & ~(page - 1);
  void* base = heapscope::os::map_aligned(mapped, alignment > page ? alignment : page);
  if (base == nullptr) return nullptr;
  void* p = static_cast<char*>(base) + offset;
  *header_of(p) = Header{base, mapped, size, kMagic};
  return p;
}

HS_TEXT void hs_unwrapped_free(void* p) {
  if (p == nullptr) return;
  Header* header = header_of(p);
  if (header->magic != kMagic) {
    heapscope::warning("heapscope: hs_unwrapped_free of a pointer it did not allocate", p);
    return;
  }
  header->magic = 0;
  heapscope::os::unmap(header->base, header->mapped);
}

HS_TEXT void* hs_unwrapped_realloc(void* p, size_t size, size_t alignment) {
  if (p == nullptr) return hs_unwrapped_malloc(size, alignment);
  if (size == 0) {
    hs_unwrapped_free(p);
    return nullptr;
  }
  Header* header = header_of(p);
  if (header->magic != kMagic) {
    heapscope::warning("heapscope: hs_unwrapped_realloc of a pointer it did not allocate", p);
    return nullptr;
  }
  void* q = hs_unwrapped_malloc(size, alignment);
  if (q == nullptr) return nullptr;
  memcpy(q, p, header->payload < size ? header->payload : size);
  hs_unwrapped_free(p);
  return q;
}

}  // extern "C"
