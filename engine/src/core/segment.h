// Segments (32 MiB, aligned to their size): 512 slices of 64 KiB, the first two holding this
// header; spans of free slices become pages (segment.cc), and the segment map answers "is
// this pointer ours" for any address.
#pragma once

#include <atomic>
#include <cstddef>

#include "core/common.h"
#include "core/page.h"
#include "core/size_class.h"
#include "core/slice_map.h"
#include "platform/platform.h"

namespace heapscope {

struct Heap;
struct ThreadData;

enum class SegmentKind : uint8_t { kNormal = 1, kHuge = 2 };

struct Segment {
  SegmentKind kind;
  size_t mapped_size;
  void* mapping;  // start of the OS mapping (== this, except for over-aligned huge blocks)
  // nullptr when abandoned. Stored and loaded atomically (segment_owner): a thread holding a
  // page it took over from this segment reads it to give the page back (span_free).
  ThreadData* owner;
  Segment* next;  // owner's segment list, or the abandoned list (under its lock)
  Segment* prev;
  bool abandoned;  // on the abandoned list (guarded by the abandoned-list lock)
  // The creation ordinal (ThreadData::ordinal) and start time (ThreadData::started_ms) of
  // the thread that abandoned it last: only threads created after that one, or started in
  // the same batch, take it over for its resident memory (thread.cc).
  uint64_t abandoned_by;
  int64_t abandoner_started_ms;
  // A page another thread had taken over was given back while the segment had an owner (or
  // was between owners): whoever owns it takes the page over (reclaim_returned_pages).
  std::atomic<uint8_t> returned_pages;
  // An emptied segment kept on the abandoned list: the bytes it keeps resident, counted in
  // the budget all such segments share (thread.cc); 0 otherwise.
  size_t kept_resident;
  // Held whole on the abandoned list since it emptied (thread.cc, kHeldEmptyResident).
  bool held_whole;
  // Its last owner had freed nearly all it made there when it exited (same place).
  bool drained_by_owner;
  SliceMap free_slices;    // slices that belong to no page
  SliceMap dirty_slices;   // free slices that may still be resident (to purge)
  SliceMap young_slices;   // dirty slices freed after purge_deadline was set: wait a round more
  SliceMap purged_slices;  // free slices purged since they were last used (reuse refaults)
  // Slices the owner put pages on since it took the segment (created or adopted it): when
  // an exited thread's segment empties, they are what a thread doing the same work next is
  // likely to use, and what it keeps resident first (segment_trim_dirty).
  SliceMap owner_spans;
  // Pages started on resident free slices (span_alloc reuses those first) may leave part of
  // them uncarved: at the purge round after the next, whatever such a page has not carved by
  // then goes back to the OS (purge_uncarved). Starts of those spans, by generation.
  SliceMap uncarved_spans;        // due at the next round
  SliceMap young_uncarved_spans;  // taken since the last round: wait one round more
  int64_t purge_deadline;         // when the old dirty slices should be purged (ms), 0 when none
  int64_t last_purge_ms;          // when slices of this segment were last purged
  // Huge segments: the mapping may be made of several kernel mappings (assembled from cached
  // pieces, huge.cc), which the kernel moves in one call only unresized and not atomically.
  bool huge_spans_mappings;
  // How far (in 4 KiB units) the latest page of each one-slice class freed here had carved:
  // span_alloc starts the class's next page on the free resident slice that best fits it.
  // A hint only (0: none yet); it outlives owners, as the next owner tends to repeat the work.
  uint8_t class_extent_units[kSmallBinCount];
  Page pages[kSlicesPerSegment];
};
// With 4 KiB OS pages the header leaves room for the hardened build's guard page after it.
static_assert(sizeof(Segment) + 4096 <= kSliceSize * kHeaderSlices);
static_assert(offsetof(Segment, pages) + sizeof(Page) <= kHugeBlockOffset);

// ---- segment map (segment.cc): O(1) "is this ours" for any pointer ---------------------------
// One byte per 32 MiB of the addresses the OS hands out (2^47 on x86-64: 4 MiB of zero pages,
// 2^48 on AArch64: 8 MiB; only entries of mapped segments are ever touched). A mapping the OS
// places beyond it is fatal (segment_map_set), never silently untracked.
inline constexpr size_t kAddressBits = os::kUserAddressBits;
inline constexpr size_t kSegmentMapSize = size_t{1} << (kAddressBits - kSegmentShift);
// True when [address, address + size) lies inside the map's range.
constexpr bool segment_map_covers(uintptr_t address, size_t size) {
  return address < (uintptr_t{1} << kAddressBits) &&
         size <= (uintptr_t{1} << kAddressBits) - address;
}
// kMapSegment: a normal segment starts here (pointer -> page is arithmetic). kMapHuge: a huge
// mapping starts here, kMapHugeTail: it continues; both resolve to the mapping's pages[0]
// on the slow path, so a huge segment never initializes its other slice descriptors.
// kMapSegmentTracked: a normal segment while memory events are tracking (segment_map_retag),
// so free's fast-path compare with kMapSegment fails and every free reaches free_unusual.
enum SegmentMapEntry : uint8_t {
  kMapNone = 0,
  kMapSegment = 1,
  kMapHugeTail = 2,
  kMapHuge = 3,
  kMapSegmentTracked = 5,
};
extern std::atomic<uint8_t> g_segment_map[kSegmentMapSize];

// A normal segment starts here (either tag): the two normal kinds are the ones with low bits 01.
HS_ALWAYS_INLINE bool is_normal_segment_entry(uint8_t kind) {
#if defined(HS_MEMORY_EVENTS) && HS_MEMORY_EVENTS
  static_assert((kMapSegmentTracked & 3) == kMapSegment && (kMapHuge & 3) != kMapSegment &&
                (kMapHugeTail & 3) != kMapSegment && (kMapNone & 3) != kMapSegment);
  return (kind & 3) == kMapSegment;
#else
  return kind == kMapSegment;
#endif
}

inline ThreadData* segment_owner(const Segment* segment) {
  return __atomic_load_n(&segment->owner, __ATOMIC_SEQ_CST);
}
inline Segment* segment_of_page(const Page* page) {
  return reinterpret_cast<Segment*>(reinterpret_cast<uintptr_t>(page) & ~kSegmentMask);
}
// The first byte of the page's span (its slices, which page->area may start inside).
inline uint8_t* span_start(const Page* page) {
  const Segment* segment = segment_of_page(page);
  return reinterpret_cast<uint8_t*>(const_cast<Segment*>(segment)) +
         static_cast<size_t>(page - segment->pages) * kSliceSize;
}

// Every slice but the header's.
inline constexpr SliceMap kUsableSlices =
    SliceMap::range(kHeaderSlices, kSlicesPerSegment - kHeaderSlices);

// Calls fn(page) for every page of a normal segment (every span in use), in address order.
// Only the in-use spans' first descriptors are read: the slice bitmap finds them. Reading the
// other descriptors would fault their pages in, and where the kernel maps no shared zero page
// for a read (as on some VM kernels) that commits all 64 KiB of a segment's descriptors.
// fn may free the span it is given. Inlined, as heap_for_each_page (takeover.h) is: threads
// that exit or take pages back run it.
template <typename Fn>
HS_ALWAYS_INLINE void segment_for_each_page(Segment* segment, Fn&& fn) {
  const SliceMap used = ~segment->free_slices & kUsableSlices;
  for (size_t j = used.next_set(0); j < kSlicesPerSegment;) {
    Page* page = &segment->pages[j];
    // A run of used slices starts with a span's first slice; a descriptor that is not one
    // (slice_count 0) is passed over, never handed to fn.
    const size_t count = page->slice_count;
    if (count != 0) fn(page);
    j = used.next_set(j + (count != 0 ? count : 1));
  }
}

// ---- segment.cc --------------------------------------------------------------------------------
// A span for a page of size class `bin` (0: a one-block page of no class). Resident free
// slices come first, those a page of the same class started at first of all: it will carve
// them about as far as its predecessor did, so they are neither faulted in again nor left
// resident beyond what the new page uses (as a slice carved whole by a 1 KiB class and then
// taken by a 16-byte class would be).
Page* span_alloc(ThreadData* td, size_t slices, size_t bin);
bool span_grow(ThreadData* td, Page* page, size_t slices);  // over free slices right after it
// Returns the page's slices to its segment; an emptied segment is released when allowed. A
// page of another thread's segment (taken over, see takeover.cc) goes back to that segment.
void span_free(ThreadData* td, Page* page, bool allow_release = true);
// A span of an abandoned segment (the caller holds the abandoned-list lock): freed, dirty.
void span_free_abandoned(Page* page);
void segments_unmap_if_empty(ThreadData* td);
void segment_detach(ThreadData* td, Segment* segment);
void segment_attach(ThreadData* td, Segment* segment);
void segment_purge_now(Segment* segment);
// For the purge thread, with the owner's slow-path lock held: each of td's segments whose
// purge deadline passed `grace_ms` or more before `now` gives back its free resident slices
// and what its pages hold past their carving.
void segments_purge_overdue(ThreadData* td, int64_t now, int64_t grace_ms);
// Purges a segment's dirty slices but those holding at most `keep_resident_bytes` resident,
// taken from the ones its owner used (owner_spans), then the others, each lowest first (where
// span_alloc and a thread doing the same work go first). Returns the bytes it left resident.
size_t segment_trim_dirty(Segment* segment, size_t keep_resident_bytes);
// What its free slices may hold resident (as far as their pages carved them).
size_t segment_resident_free_bytes(const Segment* segment);
void segment_unmap_now(Segment* segment);
bool segment_is_empty(const Segment* segment);
bool segment_has_run(const Segment* segment, size_t slices);
void segment_map_set(const Segment* segment, size_t mapped_size, bool present);
Segment* segment_of_slow(const void* p);  // nullptr if not ours
// Memory events (HS_MEMORY_EVENTS): tags every normal segment's entry kMapSegmentTracked, or
// back to kMapSegment. Segments entered meanwhile tag themselves (segment_map_set).
void segment_map_retag(bool tracked);
void purge_due(ThreadData* td, bool force);
// Gives back everything of a page's slices that may be resident, its carved blocks included:
// a page none of whose blocks is live, about to be marked uncarved (idle_owner.cc).
void purge_page_whole(Page* page);
void purge_schedule(ThreadData* td);  // make sure a purge round comes after the delay
void segment_release(ThreadData* td, Segment* segment);

}  // namespace heapscope
