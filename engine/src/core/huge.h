// Huge blocks: dedicated mappings of one block each, and their cache (huge.cc).
#pragma once

#include <cstddef>

namespace heapscope {

struct Heap;
struct Page;

void* huge_alloc(Heap* heap, size_t size, size_t alignment, bool zero);
void huge_free(Page* page);
// nullptr: copy instead (or with may_move false: cannot grow where it is)
void* huge_realloc(Heap* heap, Page* huge, size_t new_size, bool zero, bool may_move);
void huge_cache_trim(bool force);
void huge_fork_lock(bool acquire);

}  // namespace heapscope
