// Segments: 32 MiB aligned regions owned by one thread, carved into spans of 64 KiB slices.
// A slice bitmap per segment (slice_map.h) tracks free slices, another the free slices that
// may still be resident, purged back to the OS after the purge delay. The segment map answers "is
// this pointer ours" in O(1) for any address.
#include "core/segment.h"

#include <string.h>

#include "core/assert.h"
#include "core/hardening.h"
#include "core/heap.h"
#include "core/huge.h"
#include "core/options.h"
#include "core/page.h"
#include "core/page_counts.h"
#include "core/page_queue.h"
#include "core/profiler_hooks.h"
#include "core/spin_lock.h"
#include "core/stats.h"
#include "core/thread.h"
#include "events/events_hooks.h"
#include "platform/platform.h"

namespace heapscope {

std::atomic<uint8_t> g_segment_map[kSegmentMapSize];

#if HS_MEMORY_EVENTS
namespace {
// The span of map indexes ever entered, so a retag scans that and not all 4 Mi entries.
std::atomic<size_t> g_map_low{kSegmentMapSize};
std::atomic<size_t> g_map_high{0};

void map_span_include(size_t index) {
  size_t low = g_map_low.load(std::memory_order_relaxed);
  while (index < low && !g_map_low.compare_exchange_weak(low, index, std::memory_order_relaxed)) {
  }
  size_t high = g_map_high.load(std::memory_order_relaxed);
  while (index + 1 > high &&
         !g_map_high.compare_exchange_weak(high, index + 1, std::memory_order_relaxed)) {
  }
}

// Swaps one entry's tag; an entry that changed meanwhile (released, or tagged by its own
// registration) is left as it is.
void retag_entry(size_t index, bool tracked) {
  uint8_t expected = tracked ? kMapSegment : kMapSegmentTracked;
  g_segment_map[index].compare_exchange_strong(expected, tracked ? kMapSegmentTracked : kMapSegment,
                                               std::memory_order_relaxed);
}
}  // namespace

void segment_map_retag(bool tracked) {
  // The sync point pairs with segment_map_set's: a segment entered concurrently is either
  // seen here or sees the new gate itself.
  events_sync_point();
  size_t high = g_map_high.load(std::memory_order_relaxed);
  for (size_t i = g_map_low.load(std::memory_order_relaxed); i < high; ++i) {
    uint8_t kind = g_segment_map[i].load(std::memory_order_relaxed);
    if (kind == (tracked ? kMapSegment : kMapSegmentTracked)) retag_entry(i, tracked);
  }
}
#endif

HS_HOT_TEXT void segment_map_set(const Segment* segment, size_t mapped_size, bool present) {
  uintptr_t index = reinterpret_cast<uintptr_t>(segment) >> kSegmentShift;
  size_t count = (mapped_size + kSegmentMask) >> kSegmentShift;
  if (!segment_map_covers(reinterpret_cast<uintptr_t>(segment), count << kSegmentShift)) {
    // Untracked, its blocks would be freed as foreign pointers: stop instead. Only an OS whose
    // user address space outgrew os::kUserAddressBits gets here (a new architecture or paging).
    if (present)
      fatal("heapscope: the OS mapped memory beyond the segment map's address range", segment);
    return;
  }
  for (size_t i = count; i-- > 1;) {
    g_segment_map[index + i].store(present ? kMapHugeTail : kMapNone, std::memory_order_release);
  }
  uint8_t head = segment->kind == SegmentKind::kHuge ? kMapHuge : kMapSegment;
  g_segment_map[index].store(present ? head : uint8_t{kMapNone}, std::memory_order_release);
#if HS_MEMORY_EVENTS
  if (present && head == kMapSegment) {
    map_span_include(index);
    events_sync_point();  // pairs with segment_map_retag's
    if (events_gate_open()) retag_entry(index, true);
  }
#endif
}

Segment* segment_of_slow(const void* p) {
  uintptr_t index = reinterpret_cast<uintptr_t>(p) >> kSegmentShift;
  if (index >= kSegmentMapSize) return nullptr;
  // Pointers into a huge mapping can lie past its first 32 MiB (kMapHugeTail entries).
  while (g_segment_map[index].load(std::memory_order_acquire) == kMapHugeTail && index > 0) {
    --index;
  }
  uint8_t head = g_segment_map[index].load(std::memory_order_acquire);
  if (!is_normal_segment_entry(head) && head != kMapHuge) return nullptr;
  Segment* segment = reinterpret_cast<Segment*>(index << kSegmentShift);
  // A huge mapping ends at a page boundary, not at its last 32 MiB boundary: the rest of that
  // last map entry's range can hold someone else's memory.
  if (head == kMapHuge && reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(segment) >=
                              segment->mapped_size) {
    return nullptr;
  }
  return segment;
}

static void segment_link(ThreadData* td, Segment* segment) {
  segment->prev = nullptr;
  segment->next = td->segments;
  if (td->segments != nullptr) td->segments->prev = segment;
  td->segments = segment;
}

static void segment_unlink(ThreadData* td, Segment* segment) {
  if (segment->prev != nullptr)
    segment->prev->next = segment->next;
  else
    td->segments = segment->next;
  if (segment->next != nullptr) segment->next->prev = segment->prev;
  segment->next = segment->prev = nullptr;
}

// Transparent huge pages (the transparent_huge_pages option). Where the system gives them to
// all memory, each 2 MiB region a segment touches becomes resident whole: a segment's header,
// its first page of each class and its medium pages lie in different regions, so a program
// with a 1-2 MiB heap would hold 5-12 MiB. The segment map (in the library's zero-filled data)
// is marked too: its entries in use may share one more such region.
HS_HOT_TEXT static void advise_huge_pages(void* segment) {
  const long mode = option(hs_option_transparent_huge_pages);
  if (mode == 1) return;
  static std::atomic<bool> map_advised{false};
  if (mode == 0 && !map_advised.exchange(true, std::memory_order_relaxed)) {
    os::advise_huge_pages(g_segment_map, sizeof g_segment_map, false);
  }
  os::advise_huge_pages(segment, kSegmentSize, mode == 2);
}

static Segment* segment_new(ThreadData* td) {
  void* memory = os::map_aligned(kSegmentSize, kSegmentSize);
  if (memory == nullptr) return nullptr;
  advise_huge_pages(memory);
  Segment* segment = static_cast<Segment*>(memory);  // zeroed by the OS
  segment->kind = SegmentKind::kNormal;
  segment->mapped_size = kSegmentSize;
  segment->mapping = memory;
  __atomic_store_n(&segment->owner, td, __ATOMIC_SEQ_CST);
  segment->free_slices = kUsableSlices;
  guard_segment_header(segment);
  segment_link(td, segment);
  segment_map_set(segment, kSegmentSize, true);
  g_counters.segments.fetch_add(1, std::memory_order_relaxed);
  g_counters.reserved_bytes.fetch_add(kSegmentSize, std::memory_order_relaxed);
  note_committed(kHeaderSlices * kSliceSize);
  return segment;
}

HS_HOT_TEXT static void segment_unmap(Segment* segment) {
  size_t resident = (~segment->free_slices | segment->dirty_slices).count();
  g_counters.committed_bytes.fetch_sub(resident * kSliceSize, std::memory_order_relaxed);
  g_counters.purged_bytes.fetch_add(resident * kSliceSize, std::memory_order_relaxed);
  g_counters.segments.fetch_sub(1, std::memory_order_relaxed);
  g_counters.reserved_bytes.fetch_sub(segment->mapped_size, std::memory_order_relaxed);
  segment_map_set(segment, segment->mapped_size, false);
  os::unmap(segment->mapping, segment->mapped_size);
}

// The delay this thread waits before purging free slices: the option, raised while purged
// memory keeps being reused (see ThreadData::purge_delay_ms).
static int64_t purge_delay_of(const ThreadData* td) {
  int64_t base = option(hs_option_purge_delay);
  if (base <= 0) return base;  // 0: at once, < 0: never; neither adapts
  int64_t ceiling = option(hs_option_purge_delay_max);
  if (ceiling < base) ceiling = base;
  int64_t delay = td->purge_delay_ms;
  return delay < base ? base : (delay > ceiling ? ceiling : delay);
}

// Slices purged a moment ago are wanted again: the purge was premature, so wait longer.
static void note_refault(ThreadData* td, const Segment* segment) {
  int64_t delay = purge_delay_of(td);
  if (delay <= 0) return;
  if (os::now_ms() - segment->last_purge_ms > 2 * delay) return;
  td->purge_delay_ms = 2 * delay;
  td->refaulted = true;
}

// Takes the free slices [first, first + count) for the span starting at span_first: out of
// the free, dirty, young and purged sets (what was not resident counts as committed again, a
// purged slice taken back is a refault), their descriptors pointing back to the span's first.
// Returns whether any of them was still resident.
HS_HOT_TEXT static bool take_slices(ThreadData* td, Segment* segment, size_t span_first,
                                    size_t first, size_t count) {
  SliceMap bits = SliceMap::range(first, count);
  const bool resident = (bits & segment->dirty_slices).any();
  SliceMap fresh = bits & ~segment->dirty_slices;  // purged or never touched: counts anew
  note_committed(fresh.count() * kSliceSize);
  if (HS_UNLIKELY((bits & segment->purged_slices).any())) {
    note_refault(td, segment);
    segment->purged_slices &= ~bits;
  }
  segment->young_slices &= ~bits;
  segment->free_slices &= ~bits;
  segment->dirty_slices &= ~bits;
  for (size_t j = first; j < first + count; ++j) {
    if (j == span_first) continue;
    segment->pages[j].slice_back = static_cast<uint16_t>(j - span_first);
    segment->pages[j].slice_count = 0;
  }
  return resident;
}

// Resident memory is tracked per slice in 4 KiB units (Page::resident_units).
static constexpr size_t kResidentUnit = 4096;
static_assert(kSliceSize / kResidentUnit <= 255);

static size_t round_up_to_os_page(size_t bytes) {
  const size_t os_page = os::page_size();
  return (bytes + os_page - 1) & ~(os_page - 1);
}
// A unit stands for the OS page holding it (a whole slice where pages are 64 KiB).
static size_t resident_bytes_of(const Page* slice) {
  return round_up_to_os_page(slice->resident_units * kResidentUnit);
}

// A page of a class started on resident slices: its uncarved part waits for purge rounds.
static void note_uncarved(ThreadData* td, Segment* segment, size_t first) {
  const int64_t delay = purge_delay_of(td);
  if (delay < 0) return;  // never purged
  segment->young_uncarved_spans |= SliceMap::range(first, 1);
  if (segment->purge_deadline == 0) segment->purge_deadline = os::now_ms() + delay;
  if (td->purge_deadline == 0 || segment->purge_deadline < td->purge_deadline) {
    td->purge_deadline = segment->purge_deadline;
  }
}

HS_HOT_TEXT static Page* span_take(ThreadData* td, Segment* segment, size_t first, size_t count,
                                   size_t bin) {
  if (take_slices(td, segment, first, first, count) && bin != 0) {
    note_uncarved(td, segment, first);
  }
  segment->owner_spans |= SliceMap::range(first, count);
  Page* page = &segment->pages[first];
  page->slice_count = static_cast<uint16_t>(count);
  page->slice_back = 0;
  page->area = reinterpret_cast<uint8_t*>(segment) + first * kSliceSize;
  g_counters.pages.fetch_add(1, std::memory_order_relaxed);
  return page;
}

// Extends a span over the free slices right after it (a one-block page whose block grows in
// place). False, changing nothing, unless all of them are free.
HS_HOT_TEXT bool span_grow(ThreadData* td, Page* page, size_t slices) {
  Segment* segment = reinterpret_cast<Segment*>(reinterpret_cast<uintptr_t>(page) & ~kSegmentMask);
  size_t first = static_cast<size_t>(page - segment->pages);
  size_t count = page->slice_count;
  if (slices <= count || first + slices > kSlicesPerSegment) return false;
  if ((SliceMap::range(first + count, slices - count) & ~segment->free_slices).any()) return false;
  take_slices(td, segment, first, first + count, slices - count);
  segment->owner_spans |= SliceMap::range(first + count, slices - count);
  page->slice_count = static_cast<uint16_t>(slices);
  return true;
}

// A run of `slices` free resident slices that a page of `bin` started at, or -1. Only the
// starts that leave room for the span are looked at (each look reads a slice descriptor).
static long same_class_run(const Segment* segment, const SliceMap& dirty, size_t bin,
                           size_t slices) {
  long found = -1;
  dirty.for_each_run([&](size_t first, size_t count) {
    for (size_t j = first; found < 0 && j + slices <= first + count; ++j) {
      if (segment->pages[j].last_bin == bin) found = static_cast<long>(j);
    }
  });
  return found;
}

// For a new one-slice page of a class whose last page here carved `need` units: the free
// resident slice of the fewest resident units that covers it, else of the most; -1 when the
// class has no record. Without it, a small class would take the lowest resident slice, often
// one a big class had made fully resident, and the big class's next page a fresh slice: over
// rounds of threads doing the same work, every slice ends up resident to its highest extent.
static long best_fitting_slice(const Segment* segment, const SliceMap& dirty, size_t bin) {
  const unsigned need = segment->class_extent_units[bin];
  if (need == 0) return -1;
  long best = -1;
  unsigned best_units = 0;
  dirty.for_each_run([&](size_t first, size_t count) {
    for (size_t j = first; j < first + count; ++j) {
      const unsigned units = segment->pages[j].resident_units;
      const bool fits = units >= need;
      const bool best_fits = best >= 0 && best_units >= need;
      if (best < 0 || (fits && (!best_fits || units < best_units)) ||
          (!fits && !best_fits && units > best_units)) {
        best = static_cast<long>(j);
        best_units = units;
      }
    }
  });
  return best;
}

HS_HOT_TEXT Page* span_alloc(ThreadData* td, size_t slices, size_t bin) {
  // First still-resident (dirty) free slices: reusing them avoids page faults on memory that
  // was freed a moment ago; for a class of many blocks per page, those the class left first
  // (their resident part is where its next page carves); for a one-slice class without one,
  // the resident slice that best fits what the class carved here last. Then any free run. A
  // one-block page (a large class) is the user's to touch whole: any resident run serves it.
  for (bool adopted = false;; adopted = true) {
    if (bin != 0 && bin_block_size(bin) <= kMediumBlockMax) {
      for (Segment* s = td->segments; s != nullptr; s = s->next) {
        SliceMap dirty = s->free_slices & s->dirty_slices;
        if (dirty.none()) continue;
        long first = same_class_run(s, dirty, bin, slices);
        if (first >= 0) return span_take(td, s, static_cast<size_t>(first), slices, bin);
      }
    }
    for (Segment* s = td->segments; s != nullptr; s = s->next) {
      SliceMap dirty = s->free_slices & s->dirty_slices;
      if (dirty.none()) continue;
      long first = bin != 0 && bin < kSmallBinCount ? best_fitting_slice(s, dirty, bin) : -1;
      if (first < 0) first = dirty.find_run(slices);
      if (first >= 0) return span_take(td, s, static_cast<size_t>(first), slices, bin);
    }
    // None of its own: before faulting a medium or large page in, once, the resident memory
    // an exited thread left (reclaim_abandoned_resident; its code is not among the library's
    // hot code, as a program whose threads never exit never runs it).
    if (adopted || slices < kMediumPageSlices ||
        g_counters.abandoned_segments.load(std::memory_order_relaxed) == 0 ||
        reclaim_abandoned_resident(td, slices) == nullptr) {
      break;
    }
  }
  for (Segment* s = td->segments; s != nullptr; s = s->next) {
    long first = s->free_slices.find_run(slices);
    if (first >= 0) return span_take(td, s, static_cast<size_t>(first), slices, bin);
  }
  Segment* segment = reclaim_abandoned(td, slices);
  if (segment == nullptr) segment = segment_new(td);
  if (segment == nullptr) return nullptr;
  long first = segment->free_slices.find_run(slices);
  if (first < 0) return nullptr;  // reclaim guarantees room; defensive
  return span_take(td, segment, static_cast<size_t>(first), slices, bin);
}

// The purge delay bounds how long free memory stays resident; this bounds how much. Freeing
// many large spans in a burst (buffer churn) would otherwise keep hundreds of MiB resident
// for a delay. Over the bound, the old generation goes first, then the young one.
static constexpr size_t kLargeSpanSlices = 16;  // 1 MiB: smaller frees cannot tip the bound
static void purge_slices(Segment* segment, const SliceMap& slices, int64_t now, bool on_delay);

static void purge_over_dirty_max(ThreadData* td) {
  long limit = option(hs_option_dirty_max_bytes);
  if (limit < 0) return;
  size_t dirty = 0;
  for (Segment* s = td->segments; s != nullptr; s = s->next) dirty += s->dirty_slices.count();
  size_t max_slices = static_cast<size_t>(limit) / kSliceSize;
  for (int pass = 0; pass < 2 && dirty > max_slices; ++pass) {
    for (Segment* s = td->segments; s != nullptr && dirty > max_slices; s = s->next) {
      SliceMap victims = pass == 0 ? s->dirty_slices & ~s->young_slices : s->dirty_slices;
      if (victims.none()) continue;
      dirty -= victims.count();
      purge_slices(s, victims, 0, false);
    }
  }
}

// Gives a page's slices back to its segment's free set (their descriptors cleared); returns
// the slices.
HS_HOT_TEXT static SliceMap span_clear(Segment* segment, Page* page) {
  size_t first = static_cast<size_t>(page - segment->pages);
  size_t count = page->slice_count;
  HS_ASSERT_INTERNAL(count >= 1 && first >= kHeaderSlices && first + count <= kSlicesPerSegment);
  prof_on_span_free(page);
  // What the page may have made resident: the blocks it carved (a one-block page's block is
  // the user's whole to touch, the rest of its span no one's).
  const bool one_block = page_holds_one_block(page);
  const size_t carved = size_t{page->capacity} * page->block_size;
  for (size_t j = 0; j < count; ++j) {
    Page* slice = &segment->pages[first + j];
    const size_t slice_begin = j * kSliceSize;
    size_t in_slice = carved > slice_begin ? carved - slice_begin : 0;
    if (in_slice > kSliceSize) in_slice = kSliceSize;
    const auto carved_units = static_cast<uint8_t>((in_slice + kResidentUnit - 1) / kResidentUnit);
    if (carved_units > slice->resident_units) slice->resident_units = carved_units;
    slice->last_bin = j == 0 && !one_block ? page->bin : 0;
    if (j == 0 && !one_block && page->bin < kSmallBinCount) {
      segment->class_extent_units[page->bin] = carved_units;
    }
    if (j != 0) {
      // Only the span's first descriptor was set up (page_init); take_slices wrote nothing
      // else into the others since they were last cleared here.
      HS_ASSERT_INTERNAL(slice->block_size == 0 && slice->heap == nullptr && slice->used == 0 &&
                         page_owner_tid(slice) == 0 && slice->free == nullptr);
      slice->slice_count = 0;
      slice->slice_back = 0;
      continue;
    }
    slice->free = slice->local_free = nullptr;
    slice->used = slice->capacity = slice->reserved = 0;
    slice->keep_bias = 0;
    page_reset_samples(slice);
    slice->bin = 0;
    slice->slice_count = 0;
    slice->slice_back = 0;
    slice->block_size = 0;
    __atomic_store_n(&slice->heap, nullptr, __ATOMIC_RELAXED);
    page_init_owner(slice, 0, 0);
    slice->thread_free.store(nullptr, std::memory_order_relaxed);
    slice->remote_in_full.store(0, std::memory_order_relaxed);
    slice->next = slice->prev = nullptr;
  }
  SliceMap bits = SliceMap::range(first, count);
  segment->free_slices |= bits;
  segment->uncarved_spans &= ~bits;
  segment->young_uncarved_spans &= ~bits;
  g_counters.pages.fetch_sub(1, std::memory_order_relaxed);
  return bits;
}

HS_HOT_TEXT void span_free(ThreadData* td, Page* page, bool allow_release) {
  Segment* segment = segment_of_page(page);
  if (HS_UNLIKELY(segment_owner(segment) != td)) {  // a page this thread took over
    return_taken_page(page);
    return;
  }
  size_t count = page->slice_count;
  Heap* heap = page->heap;
  if (heap != nullptr) page_fold_counts(page);
  if (heap != nullptr && heap->kept_large == page) heap->kept_large = nullptr;
  SliceMap bits = span_clear(segment, page);
  segment->dirty_slices |= bits;

  // Slices freed while the segment already waits for a deadline are "young": that deadline
  // passes them over once, so every span stays resident for at least the delay.
  int64_t delay = purge_delay_of(td);
  if (delay >= 0) {
    if (segment->purge_deadline == 0) {
      segment->purge_deadline = os::now_ms() + delay;
      segment->young_slices &= ~bits;
    } else {
      segment->young_slices |= bits;
    }
    if (td->purge_deadline == 0 || segment->purge_deadline < td->purge_deadline) {
      td->purge_deadline = segment->purge_deadline;
    }
  }
  if (allow_release && segment_is_empty(segment)) segment_release(td, segment);
  if (count >= kLargeSpanSlices) purge_over_dirty_max(td);
  purge_due(td, delay == 0);
}

// The slices stay resident (dirty) for a thread that reclaims the segment; the abandoned
// segments' own purge deadline (thread.cc) bounds how long.
void span_free_abandoned(Page* page) {
  Segment* segment = reinterpret_cast<Segment*>(reinterpret_cast<uintptr_t>(page) & ~kSegmentMask);
  segment->dirty_slices |= span_clear(segment, page);
}

HS_HOT_TEXT void segment_release(ThreadData* td, Segment* segment) {
  // Keep a few empty segments mapped (their pages are purged after the delay): churn of
  // large buffers then reuses address space instead of mapping and unmapping each time.
  uint32_t spares = 0;
  for (Segment* s = td->segments; s != nullptr; s = s->next) {
    if (s != segment && segment_is_empty(s)) ++spares;
  }
  if (spares < kMaxSpareSegments) return;
  segment_unlink(td, segment);
  segment_unmap(segment);
}

// Returns the given dirty slices of a segment to the OS. Only purges made on the delay are
// remembered for refault detection: a forced one (hs_collect, thread exit) says nothing
// about whether the delay was too short.
HS_HOT_TEXT static void purge_slices(Segment* segment, const SliceMap& slices, int64_t now,
                                     bool on_delay) {
  g_counters.committed_bytes.fetch_sub(slices.count() * kSliceSize, std::memory_order_relaxed);
  g_counters.purged_bytes.fetch_add(slices.count() * kSliceSize, std::memory_order_relaxed);
  segment->dirty_slices &= ~slices;
  segment->young_slices &= ~slices;
  if (on_delay) {
    segment->purged_slices |= slices;
    segment->last_purge_ms = now;
  }
  slices.for_each_run([segment](size_t first, size_t count) {
    os::purge(reinterpret_cast<uint8_t*>(segment) + first * kSliceSize, count * kSliceSize);
    for (size_t j = first; j < first + count; ++j) segment->pages[j].resident_units = 0;
  });
}

// Gives back each of a page's slices past what the page carved there (keep_carved), or
// whole: what its descriptor says may be resident, and the carved part, which a page in use
// has not added to that yet. Returns the bytes purged.
HS_HOT_TEXT static size_t purge_page_slices(Segment* segment, Page* page, bool keep_carved) {
  const size_t first = static_cast<size_t>(page - segment->pages);
  const size_t carved = size_t{page->capacity} * page->block_size;
  size_t purged = 0;
  for (size_t j = 0; j < page->slice_count; ++j) {
    Page* slice = &segment->pages[first + j];
    const size_t slice_begin = j * kSliceSize;
    size_t in_slice = carved > slice_begin ? carved - slice_begin : 0;
    if (in_slice > kSliceSize) in_slice = kSliceSize;
    const size_t carved_resident = round_up_to_os_page(in_slice);
    const size_t keep = keep_carved ? carved_resident : 0;
    size_t resident = resident_bytes_of(slice);
    if (!keep_carved && carved_resident > resident) resident = carved_resident;
    if (resident <= keep) continue;
    os::purge(page->area + slice_begin + keep, resident - keep);
    purged += resident - keep;
    slice->resident_units =
        keep_carved ? static_cast<uint8_t>((in_slice + kResidentUnit - 1) / kResidentUnit) : 0;
  }
  return purged;
}

// What a page has not carved of the slices it started on while they were resident: given
// back, so that a page of few blocks put on a slice another page filled does not keep the
// rest resident (its carving faults in only what it reaches). Only pages of this thread: only
// their owner carves them. A page of many blocks only outside the full list, as full pages
// (carved whole) may be taken over by other threads; a one-block page is never taken over,
// and what its span holds past its block (a bigger block's memory, where a 65,544-byte
// request in the 80 KiB class went on the two slices a 128 KiB block had filled) no one may
// touch. Returns the bytes purged.
static size_t purge_uncarved(Segment* segment, size_t first) {
  Page* page = &segment->pages[first];
  if (page->slice_count == 0 || page_owner_tid(page) != os::thread_id()) return 0;
  if (!page_holds_one_block(page) && (page_flags(page) & kPageInFull) != 0) return 0;
  return purge_page_slices(segment, page, true);
}

HS_HOT_TEXT static void purge_uncarved_spans(Segment* segment, const SliceMap& starts) {
  size_t purged = 0;
  for (size_t j = starts.next_set(0); j < kSlicesPerSegment; j = starts.next_set(j + 1)) {
    purged += purge_uncarved(segment, j);
  }
  g_counters.purged_bytes.fetch_add(purged, std::memory_order_relaxed);
}

void purge_page_whole(Page* page) {
  const size_t purged = purge_page_slices(segment_of_page(page), page, false);
  g_counters.purged_bytes.fetch_add(purged, std::memory_order_relaxed);
}

static bool has_uncarved(const Segment* segment) {
  return segment->uncarved_spans.any() || segment->young_uncarved_spans.any();
}

HS_HOT_TEXT static void segment_purge(Segment* segment) {
  if (segment->dirty_slices.any()) {
    SliceMap dirty = segment->dirty_slices;
    purge_slices(segment, dirty, 0, false);
  }
  if (has_uncarved(segment)) {
    purge_uncarved_spans(segment, segment->uncarved_spans | segment->young_uncarved_spans);
    segment->uncarved_spans = segment->young_uncarved_spans = SliceMap{};
  }
  segment->purge_deadline = 0;
}

HS_HOT_TEXT void purge_schedule(ThreadData* td) {
  if (td->purge_deadline != 0) return;
  int64_t delay = purge_delay_of(td);
  if (delay >= 0) td->purge_deadline = os::now_ms() + delay;
}

HS_HOT_TEXT void purge_due(ThreadData* td, bool force) {
  if (HS_UNLIKELY(g_abandoned_purge_at.load(std::memory_order_relaxed) != 0)) {
    abandoned_purge_due(os::now_ms());
  }
  // The huge cache is process-wide: any thread's allocator calls expire its entries.
  huge_cache_trim(force);
  if (!force && td->purge_deadline == 0) return;
  if (td->in_purge) return;
  int64_t now = os::now_ms();
  if (!force && now < td->purge_deadline) return;
  td->in_purge = true;
  bool pages_wait = false;
  if (!force) {
    pages_wait = heap_release_idle_pages(td->default_heap);
    for (Heap* heap = td->user_heaps; heap != nullptr; heap = heap->user_next) {
      pages_wait |= heap_release_idle_pages(heap);
    }
  }
  int64_t delay = purge_delay_of(td);
  int64_t next = 0;
  bool purged = false;
  for (Segment* s = td->segments; s != nullptr; s = s->next) {
    if (s->dirty_slices.none() && !has_uncarved(s)) {
      s->purge_deadline = 0;
      continue;
    }
    if (force) {
      segment_purge(s);
      continue;
    }
    if (s->purge_deadline <= now) {
      SliceMap old = s->dirty_slices & ~s->young_slices;
      if (old.any()) {
        purge_slices(s, old, now, true);
        purged = true;
      }
      s->young_slices = SliceMap{};  // the rest now waits one full delay
      if (s->uncarved_spans.any()) purge_uncarved_spans(s, s->uncarved_spans);
      s->uncarved_spans = s->young_uncarved_spans;
      s->young_uncarved_spans = SliceMap{};
      s->purge_deadline =
          s->dirty_slices.any() || s->uncarved_spans.any() ? now + (delay > 0 ? delay : 0) : 0;
    }
    if (s->purge_deadline != 0 && (next == 0 || s->purge_deadline < next)) {
      next = s->purge_deadline;
    }
  }
  // Pages held in other threads' segments are collected again next round (takeover.cc), and
  // kept empty pages that were in use since the last round are looked at again.
  if ((td->foreign_pages != 0 || pages_wait) && !force) {
    const int64_t again = now + (delay > 0 ? delay : 1);
    if (next == 0 || again < next) next = again;
  }
  td->purge_deadline = next;
  if (purged) {
    if (!td->refaulted && delay > 0) td->purge_delay_ms = delay / 2;
    td->refaulted = false;
  }
  td->in_purge = false;
}

// Exposed for thread exit and reclaim: detach every segment of td (see thread.cc).
void segments_unmap_if_empty(ThreadData* td) {
  Segment* s = td->segments;
  while (s != nullptr) {
    Segment* following = s->next;
    if (s->free_slices == kUsableSlices) {
      segment_unlink(td, s);
      segment_unmap(s);
    }
    s = following;
  }
}

void segment_detach(ThreadData* td, Segment* segment) { segment_unlink(td, segment); }
void segment_attach(ThreadData* td, Segment* segment) {
  segment->owner_spans = SliceMap{};
  __atomic_store_n(&segment->owner, td, __ATOMIC_SEQ_CST);
  segment_link(td, segment);
}
void segments_purge_overdue(ThreadData* td, int64_t now, int64_t grace_ms) {
  for (Segment* s = td->segments; s != nullptr; s = s->next) {
    if (s->purge_deadline != 0 && now - s->purge_deadline >= grace_ms) segment_purge(s);
  }
}
void segment_purge_now(Segment* segment) {
  if (segment->dirty_slices.any()) segment_purge(segment);
}
HS_HOT_TEXT size_t segment_trim_dirty(Segment* segment, size_t keep_resident_bytes) {
  // The owner's slices first, then the others, each lowest first. Threads doing the same
  // work round after round put their pages on slightly different slices, each resident as far
  // as any page ever carved it, so what the slices hold creeps up past what one round needs;
  // over the budget, what goes must be what the last round did not use, not the highest
  // slices whoever used them.
  const SliceMap dirty = segment->dirty_slices;
  SliceMap kept{};
  size_t resident = 0;
  bool full = false;
  for (const SliceMap& candidates : {dirty & segment->owner_spans, dirty & ~segment->owner_spans}) {
    for (size_t j = candidates.next_set(0); j < kSlicesPerSegment && !full;
         j = candidates.next_set(j + 1)) {
      const size_t bytes = resident_bytes_of(&segment->pages[j]);
      full = resident + bytes > keep_resident_bytes;
      if (!full) {
        resident += bytes;
        kept |= SliceMap::range(j, 1);
      }
    }
  }
  const SliceMap purge = dirty & ~kept;
  if (purge.any()) purge_slices(segment, purge, 0, false);
  return resident;
}
HS_HOT_TEXT size_t segment_resident_free_bytes(const Segment* segment) {
  size_t resident = 0;
  const SliceMap dirty = segment->dirty_slices;
  for (size_t j = dirty.next_set(0); j < kSlicesPerSegment; j = dirty.next_set(j + 1)) {
    resident += resident_bytes_of(&segment->pages[j]);
  }
  return resident;
}
void segment_unmap_now(Segment* segment) { segment_unmap(segment); }
bool segment_is_empty(const Segment* segment) { return segment->free_slices == kUsableSlices; }
bool segment_has_run(const Segment* segment, size_t slices) {
  return segment->free_slices.find_run(slices) >= 0;
}

}  // namespace heapscope
