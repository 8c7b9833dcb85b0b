// Huge blocks (over kHugeMin, 4 MiB): one dedicated, segment-aligned mapping each, freed from
// any thread. Freed mappings wait in a small process-wide cache so that programs churning
// multi-megabyte buffers of varying sizes reuse resident pages instead of faulting fresh ones:
// a cached mapping serves a smaller request whole (within a ratio) and a bigger one by growing
// (only the growth is new pages). The cache is bounded in bytes and entries; an entry unused
// for the purge delay (adaptive, like the segments') is unmapped at the next allocator call
// or thread exit.
#include "core/huge.h"

#include <string.h>

#include "core/hardening.h"
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

constexpr size_t kCacheEntries = 16;
// A cached mapping up to this many times the request serves it whole: its tail stays resident
// for the block's next, bigger use. Beyond, the tail past this bound is unmapped, so a live
// block never holds more than this factor of what was asked. At 8, buffers cycling through
// three octaves of sizes (4-32 MiB) reuse the biggest mapping without faulting pages in.
constexpr size_t kReuseRatio = 8;
std::atomic<uint32_t> g_cache_lock{0};
CacheEntry g_cache[kCacheEntries];
size_t g_cache_count = 0;
size_t g_cache_bytes = 0;
// When the oldest entry expires (0: empty): the unlocked check every allocator call makes.
std::atomic<int64_t> g_cache_expire_at{0};
// The cache's own adaptive delay (0: the option's value), doubled up to purge_delay_max when
// a mapping is needed soon after one expired, halved after an expiry with no such need.
std::atomic<int64_t> g_cache_delay_ms{0};
std::atomic<int64_t> g_last_expiry_ms{0};
std::atomic<int64_t> g_last_miss_ms{0};
// Bytes of huge mappings in use (not cached): the cache may hold a share of them.
std::atomic<size_t> g_live_bytes{0};
constexpr size_t kLiveShare = 2;  // the cache may hold up to live / kLiveShare

// The cache's byte bound: the option, or more while many huge bytes are in use.
size_t cache_limit() {
  long option_limit = option(hs_option_huge_cache_bytes);
  if (option_limit <= 0) return 0;
  size_t share = g_live_bytes.load(std::memory_order_relaxed) / kLiveShare;
  return share > static_cast<size_t>(option_limit) ? share : static_cast<size_t>(option_limit);
}

int64_t cache_delay() {
  int64_t base = option(hs_option_purge_delay);
  if (base <= 0) return base;  // 0: not cached, < 0: never expires
  int64_t ceiling = option(hs_option_purge_delay_max);
  if (ceiling < base) ceiling = base;
  int64_t delay = g_cache_delay_ms.load(std::memory_order_relaxed);
  return delay < base ? base : (delay > ceiling ? ceiling : delay);
}

// Caller holds the lock.
void update_expire_at() {
  int64_t delay = cache_delay();
  int64_t oldest = 0;
  for (size_t i = 0; i < g_cache_count; ++i) {
    if (oldest == 0 || g_cache[i].freed_at < oldest) oldest = g_cache[i].freed_at;
  }
  int64_t at = oldest == 0 || delay < 0 ? 0 : oldest + delay;
  g_cache_expire_at.store(at, std::memory_order_relaxed);
}

void note_released(size_t bytes) {
  g_counters.reserved_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  g_counters.committed_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  g_counters.purged_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

void unmap_huge(Segment* segment) {
  note_released(segment->mapped_size);
  segment_map_set(segment, segment->mapped_size, false);
  os::unmap(segment->mapping, segment->mapped_size);
}

void cache_remove_at(size_t i) {
  g_cache_bytes -= g_cache[i].segment->mapped_size;
  g_cache[i] = g_cache[--g_cache_count];
}

// Unmaps the tail of a cached mapping past new_size.
void shrink(Segment* segment, size_t new_size) {
  size_t excess = segment->mapped_size - new_size;
  segment_map_set(segment, segment->mapped_size, false);
  os::unmap(reinterpret_cast<uint8_t*>(segment) + new_size, excess);
  segment->mapped_size = new_size;
  segment_map_set(segment, new_size, true);
  note_released(excess);
}

// Grows a cached mapping to new_size: in place when the range after it is free, else its
// pages move to a fresh aligned range (page tables move, nothing is faulted). nullptr if the
// kernel refuses both; the mapping is then unchanged.
Segment* grow(Segment* segment, size_t new_size) {
  size_t old_size = segment->mapped_size;
  segment_map_set(segment, old_size, false);
  guard_huge_block(segment, kHugeBlockOffset, false);  // the kernel remaps one range only
  void* moved = os::remap(segment, old_size, new_size, nullptr);
  if (moved == nullptr) {
    void* target = os::map_aligned(new_size, kSegmentSize);
    if (target != nullptr) {
      moved = os::remap(segment, old_size, new_size, target);
      if (moved == nullptr) os::unmap(target, new_size);
    }
  }
  if (moved == nullptr) {
    guard_huge_block(segment, kHugeBlockOffset, true);
    segment_map_set(segment, old_size, true);
    return nullptr;
  }
  segment = static_cast<Segment*>(moved);
  guard_huge_block(segment, kHugeBlockOffset, true);
  segment->mapping = moved;
  segment->mapped_size = new_size;
  segment_map_set(segment, new_size, true);
  g_counters.reserved_bytes.fetch_add(new_size - old_size, std::memory_order_relaxed);
  note_committed(new_size - old_size);
  g_counters.huge_remaps.fetch_add(1, std::memory_order_relaxed);
  return segment;
}

// A cached mapping for a request of mapped_size bytes, nullptr if none serves. Prefers, in
// order: the smallest one big enough within kReuseRatio (no new pages at all); the biggest
// smaller one, grown (only the growth is new); a bigger one, its tail past the ratio unmapped.
// *resident_out is how many of the returned mapping's bytes were already resident.
Segment* cache_take(size_t mapped_size, size_t* resident_out) {
  spin_lock(g_cache_lock);
  size_t above = kCacheEntries;
  size_t below = kCacheEntries;
  for (size_t i = 0; i < g_cache_count; ++i) {
    size_t have = g_cache[i].segment->mapped_size;
    if (have >= mapped_size) {
      if (above == kCacheEntries || have < g_cache[above].segment->mapped_size) above = i;
    } else if (below == kCacheEntries || have > g_cache[below].segment->mapped_size) {
      below = i;
    }
  }
  size_t pick = above;
  if (above == kCacheEntries ||
      (below != kCacheEntries && g_cache[above].segment->mapped_size / kReuseRatio > mapped_size)) {
    pick = below;
  }
  Segment* segment = nullptr;
  if (pick != kCacheEntries) {
    segment = g_cache[pick].segment;
    cache_remove_at(pick);
    update_expire_at();
  }
  spin_unlock(g_cache_lock);
  if (segment == nullptr) return nullptr;
  size_t have = segment->mapped_size;
  *resident_out = have < mapped_size ? have : mapped_size;
  if (have < mapped_size) {
    Segment* grown = grow(segment, mapped_size);
    if (grown == nullptr) unmap_huge(segment);
    return grown;
  }
  if (have / kReuseRatio > mapped_size) shrink(segment, mapped_size * kReuseRatio);
  *resident_out = segment->mapped_size;
  return segment;
}

// Returns true if the cache took the mapping.
bool cache_put(Segment* segment) {
  size_t limit = cache_limit();
  if (segment->mapped_size > limit) return false;
  if (cache_delay() == 0) return false;  // purge at once
  Segment* evicted[kCacheEntries];
  size_t evicted_count = 0;
  spin_lock(g_cache_lock);
  while (g_cache_count > 0 &&
         (g_cache_count == kCacheEntries || g_cache_bytes + segment->mapped_size > limit)) {
    size_t oldest = 0;
    for (size_t i = 1; i < g_cache_count; ++i) {
      if (g_cache[i].freed_at < g_cache[oldest].freed_at) oldest = i;
    }
    evicted[evicted_count++] = g_cache[oldest].segment;
    cache_remove_at(oldest);
  }
  g_cache[g_cache_count++] = CacheEntry{segment, os::now_ms()};
  g_cache_bytes += segment->mapped_size;
  update_expire_at();
  spin_unlock(g_cache_lock);
  for (size_t i = 0; i < evicted_count; ++i) unmap_huge(evicted[i]);
  return true;
}

// A mapping had to be faulted in (or grown): if an entry expired within the longest delay
// before, the delay was too short for this program's rhythm. (Within two delays would miss
// buffers reused every few delays: the faults themselves slow the program down.)
void note_miss() {
  int64_t delay = cache_delay();
  if (delay <= 0) return;
  int64_t now = os::now_ms();
  g_last_miss_ms.store(now, std::memory_order_relaxed);
  int64_t last = g_last_expiry_ms.load(std::memory_order_relaxed);
  if (last == 0 || now - last > option(hs_option_purge_delay_max)) return;
  g_cache_delay_ms.store(2 * delay, std::memory_order_relaxed);
}

}  // namespace

void huge_cache_trim(bool force) {
  int64_t at = g_cache_expire_at.load(std::memory_order_relaxed);
  if (!force && at == 0) return;
  int64_t now = os::now_ms();
  if (!force && now < at) return;
  int64_t delay = cache_delay();
  Segment* expired[kCacheEntries];
  size_t expired_count = 0;
  spin_lock(g_cache_lock);
  for (size_t i = 0; i < g_cache_count;) {
    if (force || (delay >= 0 && now - g_cache[i].freed_at >= delay)) {
      expired[expired_count++] = g_cache[i].segment;
      cache_remove_at(i);
    } else {
      ++i;
    }
  }
  update_expire_at();
  spin_unlock(g_cache_lock);
  if (expired_count == 0) return;
  for (size_t i = 0; i < expired_count; ++i) unmap_huge(expired[i]);
  if (force) return;  // says nothing about whether the delay was too short
  g_last_expiry_ms.store(now, std::memory_order_relaxed);
  // No miss for the longest delay: the churn has stopped, so shorten the delay again.
  int64_t ceiling = option(hs_option_purge_delay_max);
  if (delay > 0 && now - g_last_miss_ms.load(std::memory_order_relaxed) > ceiling) {
    g_cache_delay_ms.store(delay / 2, std::memory_order_relaxed);
  }
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

  huge_cache_trim(false);
  size_t resident = 0;  // bytes of the mapping that may hold old data
  Segment* segment = offset == kHugeBlockOffset ? cache_take(mapped_size, &resident) : nullptr;
  if (segment == nullptr || resident < mapped_size) note_miss();
  if (segment == nullptr) {
    resident = 0;
    size_t map_alignment = alignment > kSegmentSize ? alignment : kSegmentSize;
    void* memory = os::map_aligned(mapped_size, map_alignment);
    if (memory == nullptr) return nullptr;
    segment = static_cast<Segment*>(memory);
    segment->kind = SegmentKind::kHuge;
    segment->mapped_size = mapped_size;
    segment->mapping = memory;
    guard_huge_block(segment, offset, true);
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
  if (zero && resident > offset) memset(huge->area, 0, resident - offset);
  g_live_bytes.fetch_add(segment->mapped_size, std::memory_order_relaxed);
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
  guard_huge_block(segment, kHugeBlockOffset, false);  // the kernel remaps one range only
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
    guard_huge_block(segment, kHugeBlockOffset, true);
    segment_map_set(segment, old_mapped, true);
    return nullptr;
  }
  if (sampled) drop_sample(huge, area);  // grew in place: same page, same address
  segment = static_cast<Segment*>(moved);
  guard_huge_block(segment, kHugeBlockOffset, true);
  segment->mapping = moved;
  segment->mapped_size = new_mapped;
  huge = &segment->pages[0];
  huge->area = reinterpret_cast<uint8_t*>(segment) + kHugeBlockOffset;
  huge->block_size = new_mapped - kHugeBlockOffset;
  segment_map_set(segment, new_mapped, true);
  g_live_bytes.fetch_add(new_mapped - old_mapped, std::memory_order_relaxed);  // wraps to a sub
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
  g_live_bytes.fetch_sub(segment->mapped_size, std::memory_order_relaxed);
  size_t block_offset = static_cast<size_t>(huge->area - reinterpret_cast<uint8_t*>(segment));
  if (HS_HARDENED && block_offset != kHugeBlockOffset) {
    // The cache serves blocks at kHugeBlockOffset only: the guard moves there.
    guard_huge_block(segment, block_offset, false);
    guard_huge_block(segment, kHugeBlockOffset, true);
  }
  huge_cache_trim(false);
  if (!cache_put(segment)) unmap_huge(segment);
}

}  // namespace heapscope
