// Huge blocks (over kLargeMax): one dedicated, segment-aligned mapping each, freed from any
// thread. Freed mappings wait in a small process-wide cache for a short time, so programs
// that repeatedly allocate multi-megabyte buffers do not fault fresh pages in every time;
// the cache is bounded in bytes and entries expire after ten purge delays.
#include "core/huge.h"

#include <string.h>

#include "core/heap.h"
#include "core/options.h"
#include "core/page.h"
#include "core/profiler_hooks.h"
#include "core/segment.h"
#include "core/spin_lock.h"
#include "core/stats.h"
#include "core/thread.h"
#include "platform/platform.h"

namespace heapscope {

namespace {

struct CacheEntry {
  Segment* segment;
  int64_t freed_at;
};

constexpr size_t kCacheEntries = 8;
std::atomic<uint32_t> g_cache_lock{0};
CacheEntry g_cache[kCacheEntries];
size_t g_cache_count = 0;
size_t g_cache_bytes = 0;

void unmap_huge(Segment* segment) {
  g_counters.reserved_bytes.fetch_sub(segment->mapped_size, std::memory_order_relaxed);
  g_counters.committed_bytes.fetch_sub(segment->mapped_size, std::memory_order_relaxed);
  g_counters.purged_bytes.fetch_add(segment->mapped_size, std::memory_order_relaxed);
  segment_map_set(segment, segment->mapped_size, false);
  os::unmap(segment->mapping, segment->mapped_size);
}

void cache_remove_at(size_t i) {
  g_cache_bytes -= g_cache[i].segment->mapped_size;
  g_cache[i] = g_cache[--g_cache_count];
}

// Best fit among cached mappings that are big enough; a much larger one is trimmed to size
// (its tail unmapped), so any recently freed buffer can serve a smaller request.
Segment* cache_take(size_t mapped_size) {
  spin_lock(g_cache_lock);
  size_t best = kCacheEntries;
  for (size_t i = 0; i < g_cache_count; ++i) {
    size_t have = g_cache[i].segment->mapped_size;
    if (have >= mapped_size &&
        (best == kCacheEntries || have < g_cache[best].segment->mapped_size)) {
      best = i;
    }
  }
  Segment* segment = nullptr;
  if (best != kCacheEntries) {
    segment = g_cache[best].segment;
    cache_remove_at(best);
  }
  spin_unlock(g_cache_lock);
  if (segment != nullptr && segment->mapped_size - mapped_size >= kSegmentSize) {
    size_t excess = segment->mapped_size - mapped_size;
    segment_map_set(segment, segment->mapped_size, false);
    os::unmap(reinterpret_cast<uint8_t*>(segment) + mapped_size, excess);
    segment->mapped_size = mapped_size;
    segment_map_set(segment, mapped_size, true);
    g_counters.reserved_bytes.fetch_sub(excess, std::memory_order_relaxed);
    g_counters.committed_bytes.fetch_sub(excess, std::memory_order_relaxed);
    g_counters.purged_bytes.fetch_add(excess, std::memory_order_relaxed);
  }
  return segment;
}

// Returns true if the cache took the mapping.
bool cache_put(Segment* segment) {
  long limit = option(hs_option_huge_cache_bytes);
  if (limit <= 0 || segment->mapped_size > static_cast<size_t>(limit)) return false;
  Segment* evicted[kCacheEntries];
  size_t evicted_count = 0;
  spin_lock(g_cache_lock);
  while (g_cache_count > 0 && (g_cache_count == kCacheEntries ||
                               g_cache_bytes + segment->mapped_size > static_cast<size_t>(limit))) {
    size_t oldest = 0;
    for (size_t i = 1; i < g_cache_count; ++i) {
      if (g_cache[i].freed_at < g_cache[oldest].freed_at) oldest = i;
    }
    evicted[evicted_count++] = g_cache[oldest].segment;
    cache_remove_at(oldest);
  }
  g_cache[g_cache_count++] = CacheEntry{segment, os::now_ms()};
  g_cache_bytes += segment->mapped_size;
  spin_unlock(g_cache_lock);
  for (size_t i = 0; i < evicted_count; ++i) unmap_huge(evicted[i]);
  return true;
}

}  // namespace

void huge_cache_trim(bool force) {
  long delay = option(hs_option_purge_delay);
  int64_t keep_ms = delay < 0 ? INT64_MAX : delay * 10;
  int64_t now = os::now_ms();
  Segment* expired[kCacheEntries];
  size_t expired_count = 0;
  spin_lock(g_cache_lock);
  for (size_t i = 0; i < g_cache_count;) {
    if (force || now - g_cache[i].freed_at >= keep_ms) {
      expired[expired_count++] = g_cache[i].segment;
      cache_remove_at(i);
    } else {
      ++i;
    }
  }
  spin_unlock(g_cache_lock);
  for (size_t i = 0; i < expired_count; ++i) unmap_huge(expired[i]);
}

void huge_fork_lock(bool acquire) {
  if (acquire)
    spin_lock(g_cache_lock);
  else
    spin_unlock(g_cache_lock);
}

void* huge_alloc(Heap* heap, size_t size, size_t alignment, bool zero) {
  size_t offset = alignment > kHugeBlockOffset ? alignment : kHugeBlockOffset;
  // A zero-byte request still gets a byte inside the mapping: free and usable_size find the
  // block by its address, which must not be the mapping's end.
  if (size == 0) size = 1;
  size_t page = os::page_size();
  if (size > kMaxAllocSize || offset > kMaxAllocSize - size) return nullptr;
  size_t mapped_size = (offset + size + page - 1) & ~(page - 1);

  Segment* segment = offset == kHugeBlockOffset ? cache_take(mapped_size) : nullptr;
  bool fresh = segment == nullptr;
  if (fresh) {
    size_t map_alignment = alignment > kSegmentSize ? alignment : kSegmentSize;
    void* memory = os::map_aligned(mapped_size, map_alignment);
    if (memory == nullptr) return nullptr;
    segment = static_cast<Segment*>(memory);
    segment->kind = SegmentKind::kHuge;
    segment->mapped_size = mapped_size;
    segment->mapping = memory;
    // Only the header fields and pages[0] are used: the segment map sends every pointer into
    // the mapping to pages[0] (kMapHuge), and the block starts at kHugeBlockOffset, over
    // slice descriptors a huge segment never touches.
    segment_map_set(segment, mapped_size, true);
    g_counters.reserved_bytes.fetch_add(mapped_size, std::memory_order_relaxed);
    note_committed(mapped_size);
  }
  Page* huge = &segment->pages[0];
  page_init_owner(huge, 0, kPageHuge);
  page_reset_samples(huge);
  huge->block_size = segment->mapped_size - offset;
  huge->area = reinterpret_cast<uint8_t*>(segment) + offset;
  huge->used = 1;
  huge->capacity = huge->reserved = 1;
  huge->slice_count = 1;
  huge->next = huge->prev = nullptr;
  __atomic_store_n(&huge->heap, heap, __ATOMIC_RELAXED);
  huge->huge_tracked.store(0, std::memory_order_relaxed);
  if (!heap->is_default) {
    // Only first-class heaps list their huge blocks (hs_heap_destroy must find them).
    spin_lock(heap->huge_lock);
    huge->next = heap->huge_list;
    if (heap->huge_list != nullptr) heap->huge_list->prev = huge;
    heap->huge_list = huge;
    huge->huge_tracked.store(1, std::memory_order_relaxed);
    spin_unlock(heap->huge_lock);
  }
  if (zero && !fresh) memset(huge->area, 0, huge->block_size);
  g_counters.huge_count.fetch_add(1, std::memory_order_relaxed);
  heap->counters.alloc_count.add(1);
#if !HS_PROFILER
  heap->counters.requested_bytes.add(size);  // else the caller charges the countdown
#endif
  heap->counters.allocated_total.add(huge->block_size);
  return huge->area;
}

static void drop_sample(Page* huge, void* area) {
#if HS_PROFILER
  sampled_free(huge, area);
#else
  (void)huge;
  (void)area;
#endif
}

// realloc of a huge block to another huge size, without copying: the kernel grows (or shrinks)
// the mapping in place when the address range after it is free, else moves its pages to a
// fresh segment-aligned range (page tables move, bytes do not). Accounted exactly like a
// moving realloc: a free of the old block and an allocation of the new one (counters, and
// for the profiler a dropped sample and a new charge). Returns nullptr when the caller should
// copy instead: an over-aligned block, one listed in a first-class heap (its list links would
// move), or the kernel refused (or the range after it is taken and may_move is false).
void* huge_realloc(Heap* heap, Page* huge, size_t new_size, bool zero, bool may_move) {
  Segment* segment = reinterpret_cast<Segment*>(reinterpret_cast<uintptr_t>(huge) & ~kSegmentMask);
  uint8_t* area = reinterpret_cast<uint8_t*>(segment) + kHugeBlockOffset;
  if (huge->area != area || segment->mapping != segment) return nullptr;
  if (huge->huge_tracked.load(std::memory_order_acquire) != 0) return nullptr;
  if (new_size > kMaxAllocSize) return nullptr;
  size_t page = os::page_size();
  size_t old_mapped = segment->mapped_size;
  size_t new_mapped = (kHugeBlockOffset + new_size + page - 1) & ~(page - 1);
  size_t old_block = huge->block_size;
  // A sample of the old block is dropped once the resize is sure (the caller charges the new
  // size): after an in-place growth, or before the pages move, while the address its record
  // is keyed by is still ours. (A move the kernel then refuses leaves the block unsampled
  // until the caller's copy replaces it.)
  bool sampled = HS_PROFILER && (page_flags(huge) & kPageSampled) != 0;
  // The map entries go first: once the kernel has moved the pages, another thread may map
  // something new at the old range, and it must not find (or lose) our entries there.
  segment_map_set(segment, old_mapped, false);
  void* moved = os::remap(segment, old_mapped, new_mapped, nullptr);
  if (moved == nullptr && may_move) {
    if (sampled) drop_sample(huge, area);
    sampled = false;
    void* target = os::map_aligned(new_mapped, kSegmentSize);
    if (target != nullptr) {
      moved = os::remap(segment, old_mapped, new_mapped, target);
      if (moved == nullptr) os::unmap(target, new_mapped);
    }
  }
  if (moved == nullptr) {
    segment_map_set(segment, old_mapped, true);
    return nullptr;
  }
  if (sampled) drop_sample(huge, area);  // grew in place: same page, same address
  segment = static_cast<Segment*>(moved);
  segment->mapping = moved;
  segment->mapped_size = new_mapped;
  huge = &segment->pages[0];
  huge->area = reinterpret_cast<uint8_t*>(segment) + kHugeBlockOffset;
  huge->block_size = new_mapped - kHugeBlockOffset;
  segment_map_set(segment, new_mapped, true);
  if (new_mapped >= old_mapped) {
    g_counters.reserved_bytes.fetch_add(new_mapped - old_mapped, std::memory_order_relaxed);
    note_committed(new_mapped - old_mapped);
  } else {
    size_t released = old_mapped - new_mapped;
    g_counters.reserved_bytes.fetch_sub(released, std::memory_order_relaxed);
    g_counters.committed_bytes.fetch_sub(released, std::memory_order_relaxed);
    g_counters.purged_bytes.fetch_add(released, std::memory_order_relaxed);
  }
  g_counters.huge_remaps.fetch_add(1, std::memory_order_relaxed);
  heap->counters.free_count.add(1);
  heap->counters.freed_total.add(old_block);
  heap->counters.alloc_count.add(1);
  heap->counters.allocated_total.add(huge->block_size);
#if !HS_PROFILER
  heap->counters.requested_bytes.add(new_size);
#endif
  // Grown pages are fresh (zero); a zeroing shrink clears what it keeps past the request.
  if (zero && new_size < huge->block_size) {
    memset(huge->area + new_size, 0, huge->block_size - new_size);
  }
  return huge->area;
}

void huge_free(Page* huge) {
  if (huge->used == 0) fatal("heapscope: double free of a huge block", huge->area);
  if (huge->huge_tracked.load(std::memory_order_acquire) != 0) {
    // Acquire pairs with hs_heap_delete's release: seeing the new owner means seeing
    // huge_tracked cleared, so the re-check under the lock decides.
    Heap* heap = __atomic_load_n(&huge->heap, __ATOMIC_ACQUIRE);
    spin_lock(heap->huge_lock);
    if (huge->huge_tracked.load(std::memory_order_relaxed) != 0) {
      if (huge->prev != nullptr)
        huge->prev->next = huge->next;
      else
        heap->huge_list = huge->next;
      if (huge->next != nullptr) huge->next->prev = huge->prev;
      huge->huge_tracked.store(0, std::memory_order_relaxed);
    }
    spin_unlock(heap->huge_lock);
  }
  __atomic_store_n(&huge->heap, nullptr, __ATOMIC_RELAXED);
  huge->used = 0;
  g_counters.huge_count.fetch_sub(1, std::memory_order_relaxed);
  Segment* segment = reinterpret_cast<Segment*>(reinterpret_cast<uintptr_t>(huge) & ~kSegmentMask);
  if (!cache_put(segment)) unmap_huge(segment);
}

}  // namespace heapscope
