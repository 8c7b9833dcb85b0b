// Huge blocks (over kHugeMin, 4 MiB): one dedicated, segment-aligned mapping each, freed from
// any thread. Freed mappings wait in a small process-wide cache of resident *pieces*, so that
// programs churning multi-megabyte buffers of varying sizes reuse resident pages instead of
// faulting fresh ones. Where the kernel moves a range of several mappings in one call
// (os::remap_moves_joined_mappings), a block holds what it asked for: a cached piece is cut to
// the request (the rest stays cached, merged with its neighbours), moved onto an aligned range
// when it does not start on one, and a request bigger than every piece is assembled from
// several, so only the shortfall is faulted in. Elsewhere a cached mapping is used whole: it
// serves a smaller request within kReuseRatio and a bigger one by growing. The cache is bounded
// in bytes and entries; a piece unused for the purge delay (adaptive, like the segments') is
// unmapped at the next allocator call or thread exit.
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

// Free pages, resident unless never touched, of one or more of our mappings side by side.
struct Piece {
  uint8_t* base;
  size_t size;
  int64_t freed_at;
  bool joined;  // may span several kernel mappings (a failed move may then have moved some)
};

constexpr size_t kCacheEntries = 32;
// Cutting a piece leaves a tail this short with the block instead of caching it: at most this
// much of a live block lies past its request.
constexpr size_t kMinPiece = size_t{1} << 20;
// A request takes at most this many pieces: each is one remap call.
constexpr size_t kMaxParts = 8;
// Where pieces are cut and joined, mappings are made and cut in whole units of this (the
// range one page-table page maps on x86-64 and 4 KiB-page AArch64), so every piece starts
// on one and every move keeps each page's offset within it. The kernel then moves whole
// page-table pages rather than each entry; and on hypervisors that shadow the guest's page
// tables (PVM), pages moved to another offset cost a hypervisor fault each at their next
// touch, about what faulting them in fresh costs: malloc-large ran 24-31 s so, against 3.9 s
// with whole mappings (tcmalloc 3.6).
constexpr size_t kMoveGranule = size_t{2} << 20;
// Whole mappings only: a cached mapping up to this many times the request serves it whole, its
// tail kept resident for the block's next, bigger use; beyond, the tail past this bound is
// unmapped. At 8, buffers cycling through three octaves of sizes (4-32 MiB) reuse the biggest
// mapping without faulting pages in.
constexpr size_t kReuseRatio = 8;
std::atomic<uint32_t> g_cache_lock{0};
Piece g_cache[kCacheEntries];
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

bool segment_aligned(const uint8_t* p) {
  return (reinterpret_cast<uintptr_t>(p) & kSegmentMask) == 0;
}

// The mapping a huge block of `request_mapped` bytes (header and block, page-rounded) gets.
size_t mapping_size_for(size_t request_mapped) {
  if (!os::remap_moves_joined_mappings()) return request_mapped;
  return (request_mapped + kMoveGranule - 1) & ~(kMoveGranule - 1);
}

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

void note_reserved(size_t bytes) {
  g_counters.reserved_bytes.fetch_add(bytes, std::memory_order_relaxed);
  note_committed(bytes);
}

void note_unreserved(size_t bytes) {
  g_counters.reserved_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  g_counters.committed_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

void note_released(size_t bytes) {
  note_unreserved(bytes);
  g_counters.purged_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

// Clears the segment map entries of the 32 MiB ranges that start inside [base, base + size):
// a piece's, before its pages leave the cache. The entry of a range starting before `base`
// belongs to the block the piece was cut from and stays.
void map_clear(uint8_t* base, size_t size) {
  uintptr_t first = (reinterpret_cast<uintptr_t>(base) + kSegmentMask) & ~kSegmentMask;
  uintptr_t end = reinterpret_cast<uintptr_t>(base) + size;
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a segment boundary inside the piece.
  if (first < end) segment_map_set(reinterpret_cast<Segment*>(first), end - first, false);
}

void unmap_piece(const Piece& piece) {
  map_clear(piece.base, piece.size);
  os::unmap(piece.base, piece.size);
  note_released(piece.size);
}

// Caller holds the lock (for all the cache_* functions below).
void cache_remove_at(size_t i) {
  g_cache_bytes -= g_cache[i].size;
  g_cache[i] = g_cache[--g_cache_count];
}

// Adds a piece, merged with the cached pieces it touches when pieces can be cut and joined
// (else a piece is a whole mapping, unmapped whole). There must be room.
void cache_insert(Piece piece, bool join) {
  for (size_t i = 0; join && i < g_cache_count;) {
    const Piece& other = g_cache[i];
    if (other.base + other.size == piece.base) {
      piece.base = other.base;
    } else if (piece.base + piece.size != other.base) {
      ++i;
      continue;
    }
    piece.size += other.size;
    piece.joined = true;
    cache_remove_at(i);  // slot i now holds another piece: look at it too
  }
  g_cache[g_cache_count++] = piece;
  g_cache_bytes += piece.size;
}

Piece cache_pop_oldest() {
  size_t oldest = 0;
  for (size_t i = 1; i < g_cache_count; ++i) {
    if (g_cache[i].freed_at < g_cache[oldest].freed_at) oldest = i;
  }
  Piece piece = g_cache[oldest];
  cache_remove_at(oldest);
  return piece;
}

// Caches a freed block's mapping, or unmaps it when caching is off or it exceeds the bound;
// unmaps what the bounds then evict, oldest first.
void cache_put(Piece piece) {
  size_t limit = cache_limit();
  bool join = os::remap_moves_joined_mappings();
  Piece evicted[kCacheEntries + 1];
  size_t evicted_count = 0;
  spin_lock(g_cache_lock);
  if (limit == 0 || cache_delay() == 0 || piece.size > limit) {
    evicted[evicted_count++] = piece;
  } else {
    if (g_cache_count == kCacheEntries) evicted[evicted_count++] = cache_pop_oldest();
    cache_insert(piece, join);
    while (g_cache_bytes > limit) evicted[evicted_count++] = cache_pop_oldest();
  }
  update_expire_at();
  spin_unlock(g_cache_lock);
  for (size_t i = 0; i < evicted_count; ++i) unmap_piece(evicted[i]);
}

// The pieces a request takes out of the cache, in the order they are laid out in its block.
struct Take {
  Piece parts[kMaxParts];
  size_t count = 0;
  size_t bytes = 0;
};

// Takes piece i out of the cache into `take`: only its first `want` bytes when the rest is
// worth keeping (the rest stays cached).
void take_part(size_t i, size_t want, Take* take) {
  Piece piece = g_cache[i];
  cache_remove_at(i);
  if (piece.size >= want + kMinPiece) {
    // The tail's age restarts: the pages beside it were just wanted, so it likely is soon.
    cache_insert(Piece{piece.base + want, piece.size - want, os::now_ms(), piece.joined}, true);
    piece.size = want;
  }
  take->parts[take->count++] = piece;
  take->bytes += piece.size;
}

// Pieces cut and joined: the smallest segment-aligned piece big enough (the block starts where
// it is); else the smallest piece big enough (its pages move); else the biggest pieces until
// the request is covered.
void plan_cut(size_t want, Take* take) {
  size_t aligned = kCacheEntries;
  size_t any = kCacheEntries;
  for (size_t i = 0; i < g_cache_count; ++i) {
    size_t have = g_cache[i].size;
    if (have < want) continue;
    if (any == kCacheEntries || have < g_cache[any].size) any = i;
    if (segment_aligned(g_cache[i].base) &&
        (aligned == kCacheEntries || have < g_cache[aligned].size)) {
      aligned = i;
    }
  }
  if (aligned != kCacheEntries) return take_part(aligned, want, take);
  if (any != kCacheEntries) return take_part(any, want, take);
  while (take->bytes < want && take->count < kMaxParts && g_cache_count > 0) {
    size_t biggest = 0;
    for (size_t i = 1; i < g_cache_count; ++i) {
      if (g_cache[i].size > g_cache[biggest].size) biggest = i;
    }
    take_part(biggest, want - take->bytes, take);
  }
}

// Whole mappings, in order of preference: the smallest big enough within kReuseRatio (no new
// pages at all); the biggest smaller one, to grow; a bigger one, its tail past the ratio
// unmapped.
void plan_whole(size_t want, Take* take) {
  size_t above = kCacheEntries;
  size_t below = kCacheEntries;
  for (size_t i = 0; i < g_cache_count; ++i) {
    size_t have = g_cache[i].size;
    if (have >= want) {
      if (above == kCacheEntries || have < g_cache[above].size) above = i;
    } else if (below == kCacheEntries || have > g_cache[below].size) {
      below = i;
    }
  }
  size_t pick = above;
  if (above == kCacheEntries ||
      (below != kCacheEntries && g_cache[above].size / kReuseRatio > want)) {
    pick = below;
  }
  if (pick == kCacheEntries) return;
  take->parts[take->count++] = g_cache[pick];
  take->bytes = g_cache[pick].size;
  cache_remove_at(pick);
}

// Moves `size` bytes of pages onto `target`, inside a fresh mapping whose untouched pages they
// replace (page tables move, nothing is faulted or copied). False if the kernel refuses.
bool move_onto(uint8_t* from, size_t size, uint8_t* target) {
  return os::remap(from, size, size, target) != nullptr;
}

// A huge segment's header over whatever its first page held (a cached piece holds anyone's
// old bytes): every field reads zero, as in a fresh mapping, but these.
Segment* init_header(uint8_t* base, size_t mapped_size, bool spans_mappings) {
  auto* segment = reinterpret_cast<Segment*>(base);
  memset(static_cast<void*>(segment), 0, offsetof(Segment, pages) + sizeof(Page));
  segment->kind = SegmentKind::kHuge;
  segment->mapped_size = mapped_size;
  segment->mapping = segment;
  segment->huge_spans_mappings = spans_mappings;
  return segment;
}

// Makes a block of the pieces taken for a request of mapped_size bytes: where it is when that
// is one segment-aligned piece big enough, else on a fresh aligned range onto which the
// pieces' pages move in turn, the rest of the range faulting in as the block is used. nullptr
// when no range can be mapped. *resident_out: how many of the block's first bytes may hold
// old data.
Segment* make_block(const Take& take, size_t mapped_size, size_t* resident_out) {
  uint8_t* first = take.parts[0].base;
  if (take.count == 1 && take.bytes >= mapped_size && segment_aligned(first)) {
    map_clear(first, take.bytes);
    *resident_out = take.bytes;
    return init_header(first, take.bytes, take.parts[0].joined);
  }
  size_t total = take.bytes > mapped_size ? take.bytes : mapped_size;
  auto* target = static_cast<uint8_t*>(os::map_aligned(total, kSegmentSize));
  if (target != nullptr) note_reserved(total);
  size_t offset = 0;
  for (size_t i = 0; i < take.count; ++i) {
    const Piece& part = take.parts[i];
    map_clear(part.base, part.size);
    if (target != nullptr && move_onto(part.base, part.size, target + offset)) {
      note_unreserved(part.size);  // its pages replaced some of the range's
    } else if (target == nullptr || !part.joined) {
      os::unmap(part.base, part.size);  // nothing moved (one mapping moves whole or not at all)
      note_released(part.size);
    }
    // A refused move of several mappings may have moved some of them (out of memory midway):
    // their old addresses may be someone else's already, so nothing there is unmapped; the
    // rest stays mapped, unused. Either way the range counts as holding old data up to here.
    offset += part.size;
  }
  if (target == nullptr) return nullptr;
  *resident_out = offset;
  bool one_mapping = take.count == 1 && !take.parts[0].joined && take.bytes == total;
  return init_header(target, total, !one_mapping);
}

// Makes a block of one whole cached mapping: grown (in place, or its pages move to a fresh
// aligned range), or its tail past kReuseRatio times the request unmapped. nullptr when it
// cannot grow (it is then unmapped).
Segment* fit_whole(const Piece& piece, size_t mapped_size, size_t* resident_out) {
  map_clear(piece.base, piece.size);
  auto* base = piece.base;
  size_t size = piece.size;
  *resident_out = size < mapped_size ? size : mapped_size;
  if (size < mapped_size) {
    void* grown = os::remap(base, size, mapped_size, nullptr);
    if (grown == nullptr) {
      void* target = os::map_aligned(mapped_size, kSegmentSize);
      if (target != nullptr) {
        grown = os::remap(base, size, mapped_size, target);
        if (grown == nullptr) os::unmap(target, mapped_size);
      }
    }
    if (grown == nullptr) {
      unmap_piece(piece);
      return nullptr;
    }
    note_reserved(mapped_size - size);
    base = static_cast<uint8_t*>(grown);
    size = mapped_size;
  } else if (size / kReuseRatio > mapped_size) {
    size_t keep = mapped_size * kReuseRatio;
    os::unmap(base + keep, size - keep);
    note_released(size - keep);
    size = keep;
    *resident_out = size;
  } else {
    *resident_out = size;
  }
  return init_header(base, size, false);
}

// A block of mapped_size bytes from the cache, its header set and its map entries not yet;
// nullptr if the cache has nothing for it.
Segment* cache_take(size_t mapped_size, size_t* resident_out) {
  bool cut = os::remap_moves_joined_mappings();
  Take take;
  spin_lock(g_cache_lock);
  if (cut)
    plan_cut(mapped_size, &take);
  else
    plan_whole(mapped_size, &take);
  if (take.count > 0) update_expire_at();
  spin_unlock(g_cache_lock);
  if (take.count == 0) return nullptr;
  if (cut) return make_block(take, mapped_size, resident_out);
  return fit_whole(take.parts[0], mapped_size, resident_out);
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

HS_HOT_TEXT void huge_cache_trim(bool force) {
  int64_t at = g_cache_expire_at.load(std::memory_order_relaxed);
  if (!force && at == 0) return;
  int64_t now = os::now_ms();
  if (!force && now < at) return;
  int64_t delay = cache_delay();
  Piece expired[kCacheEntries];
  size_t expired_count = 0;
  spin_lock(g_cache_lock);
  for (size_t i = 0; i < g_cache_count;) {
    if (force || (delay >= 0 && now - g_cache[i].freed_at >= delay)) {
      expired[expired_count++] = g_cache[i];
      cache_remove_at(i);
    } else {
      ++i;
    }
  }
  update_expire_at();
  spin_unlock(g_cache_lock);
  if (expired_count == 0) return;
  for (size_t i = 0; i < expired_count; ++i) unmap_piece(expired[i]);
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
  const size_t request_mapped = (offset + size + page - 1) & ~(page - 1);
  const size_t mapped_size = mapping_size_for(request_mapped);

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
    note_reserved(mapped_size);
  }
  guard_huge_block(segment, offset, true);
  // Only the header fields and pages[0] are used: the segment map sends every pointer into
  // the mapping to pages[0] (kMapHuge), and the block starts at kHugeBlockOffset, over
  // slice descriptors a huge segment never touches.
  segment_map_set(segment, segment->mapped_size, true);
  Page* huge = &segment->pages[0];
  page_init_owner(huge, 0, kPageHuge);
  page_reset_samples(huge);
  // What was asked for, page-rounded: the pages past it (the rest of a move granule, a tail
  // under kMinPiece, a whole mapping's tail) stay out of the block, so its usable size does
  // not depend on what the cache held.
  huge->block_size = request_mapped - offset;
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
  if (resident > mapped_size) resident = mapped_size;
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
  const size_t request_mapped = (kHugeBlockOffset + new_size + page - 1) & ~(page - 1);
  size_t new_mapped = mapping_size_for(request_mapped);
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
  // In place: a shrink unmaps the tail (a block assembled from cached pieces spans several
  // mappings: one unmap call takes them all), a growth needs the range after the block free.
  void* moved = segment;
  if (new_mapped < old_mapped) {
    os::unmap(reinterpret_cast<uint8_t*>(segment) + new_mapped, old_mapped - new_mapped);
  } else if (new_mapped > old_mapped) {
    moved = os::remap(segment, old_mapped, new_mapped, nullptr);
  }
  if (moved == nullptr && may_move) {
    if (sampled) drop_sample(huge, area);
    sampled = false;
    auto* target = static_cast<uint8_t*>(os::map_aligned(new_mapped, kSegmentSize));
    if (target != nullptr && !segment->huge_spans_mappings) {
      moved = os::remap(segment, old_mapped, new_mapped, target);
      if (moved == nullptr) os::unmap(target, new_mapped);
    } else if (target != nullptr) {
      // Several mappings move only unresized, onto the start of the new range, and not
      // atomically: refused midway, part of the block is gone from here and its copy would
      // be wrong.
      if (!move_onto(reinterpret_cast<uint8_t*>(segment), old_mapped, target)) {
        fatal(
            "heapscope: the kernel refused to move the rest of a huge block it had begun to "
            "move (out of memory)",
            area);
      }
      moved = target;
    }
  }
  if (moved == nullptr) {
    guard_huge_block(segment, kHugeBlockOffset, true);
    segment_map_set(segment, old_mapped, true);
    return nullptr;
  }
  if (sampled) drop_sample(huge, area);    // grew in place: same page, same address
  segment = static_cast<Segment*>(moved);  // its header moved too (huge_spans_mappings kept)
  guard_huge_block(segment, kHugeBlockOffset, true);
  segment->mapping = moved;
  segment->mapped_size = new_mapped;
  huge = &segment->pages[0];
  huge->area = reinterpret_cast<uint8_t*>(segment) + kHugeBlockOffset;
  huge->block_size = request_mapped - kHugeBlockOffset;
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
  // Grown pages are fresh (zero), and so were the mapping's pages past the old block (a
  // zeroing allocation cleared them); a zeroing shrink clears what it keeps of the old block
  // past the request, up to the mapping's end (the rest of a move granule stays mapped).
  if (zero) {
    size_t kept_end = new_mapped - kHugeBlockOffset;
    if (old_block < kept_end) kept_end = old_block;
    if (new_size < kept_end) memset(huge->area + new_size, 0, kept_end - new_size);
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
  guard_huge_block(segment, block_offset, false);  // cached pages hold no guard
  huge_cache_trim(false);
  // The block's segment map entries stay until its pages are used again: a second free of
  // the block finds the header (used == 0) and stops.
  cache_put(Piece{reinterpret_cast<uint8_t*>(segment), segment->mapped_size, os::now_ms(),
                  segment->huge_spans_mappings});
}

}  // namespace heapscope
