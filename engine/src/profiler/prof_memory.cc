// Profiler memory: raw OS chunks carved into power-of-two classes with free lists, so the
// memory held tracks the live samples and stacks, not the history of the session.
#include "platform/platform.h"
#include "profiler/prof_internal.h"

namespace heapscope::prof {

void* ProfMemory::map_chunk(size_t size) {
  size_t total = size + sizeof(Chunk);
  size_t page = os::page_size();
  total = (total + page - 1) & ~(page - 1);
  if (!within_budget(total)) return nullptr;
  void* memory = os::map_pages(total);
  if (memory == nullptr) return nullptr;
  auto* chunk = static_cast<Chunk*>(memory);
  chunk->next = chunks_;
  chunk->size = total;
  chunks_ = chunk;
  committed_ += total;
  return chunk + 1;
}

void* ProfMemory::allocate(size_t size) {
  if (size > (size_t{1} << kMaxClassShift)) {
    // Large (hash tables): a mapping of its own, unlinked from the chunk list on release.
    void* large = map_chunk(size);
    if (large != nullptr) in_use_ += size;
    return large;
  }
  size_t shift = kMinClassShift;
  while ((size_t{1} << shift) < size) ++shift;
  size_t cls = shift - kMinClassShift;
  size_t object_size = size_t{1} << shift;
  if (free_lists_[cls] != nullptr) {
    FreeObject* object = free_lists_[cls];
    free_lists_[cls] = object->next;
    in_use_ += object_size;
    return object;
  }
  if (bump_[cls] == nullptr || bump_[cls] + object_size > bump_end_[cls]) {
    size_t usable = kChunkSize - sizeof(Chunk);
    void* chunk = map_chunk(usable);
    if (chunk == nullptr) return nullptr;
    bump_[cls] = static_cast<uint8_t*>(chunk);
    bump_end_[cls] = bump_[cls] + usable;
  }
  void* object = bump_[cls];
  bump_[cls] += object_size;
  in_use_ += object_size;
  return object;
}

void ProfMemory::release(void* p, size_t size) {
  if (p == nullptr) return;
  if (size > (size_t{1} << kMaxClassShift)) {
    Chunk* chunk = static_cast<Chunk*>(p) - 1;
    for (Chunk** link = &chunks_; *link != nullptr; link = &(*link)->next) {
      if (*link == chunk) {
        *link = chunk->next;
        committed_ -= chunk->size;
        in_use_ -= size;
        os::unmap(chunk, chunk->size);
        return;
      }
    }
    return;
  }
  size_t shift = kMinClassShift;
  while ((size_t{1} << shift) < size) ++shift;
  in_use_ -= size_t{1} << shift;
  auto* object = static_cast<FreeObject*>(p);
  object->next = free_lists_[shift - kMinClassShift];
  free_lists_[shift - kMinClassShift] = object;
}

void ProfMemory::release_everything() {
  Chunk* chunk = chunks_;
  while (chunk != nullptr) {
    Chunk* next = chunk->next;
    os::unmap(chunk, chunk->size);
    chunk = next;
  }
  chunks_ = nullptr;
  committed_ = 0;
  in_use_ = 0;
  for (size_t i = 0; i < kClasses; ++i) {
    free_lists_[i] = nullptr;
    bump_[i] = bump_end_[i] = nullptr;
  }
}

}  // namespace heapscope::prof
