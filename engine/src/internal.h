// The engine's index: core data structures and the functions each file provides.
//
//   segment (32 MiB, aligned) ── 512 slices of 64 KiB; slices 0-1 are the header (this struct)
//     └── page = span of slices holding blocks of one size class (or one huge block)
//   Heap (per thread, plus first-class heaps) ── direct table + page queue per bin
//   ThreadData (per thread) ── owns segments, spare (empty) segments and pending purges
//
// Files: segment.cc (spans, purge, segment map), page.cc (page set-up and collection),
// heap.cc (queues, generic malloc/free paths, first-class heaps), thread.cc (process/thread
// life cycle, abandon and reclaim, fork), huge.cc (dedicated mappings and their cache),
// alloc_inline.h (the fast paths), api.cc / override_*.cc (entry points), stats.cc, options.cc.
#pragma once

#include <atomic>
#include <cstddef>

#include "core/common.h"
#include "heapscope/heapscope.h"
#include "heapscope/profile.h"
#include "core/size_class.h"
#include "core/slice_map.h"

namespace heapscope {

struct Heap;
struct ThreadData;
struct Segment;

// A counter written only by its owning thread with a plain add (one instruction on the fast
// path). Other threads read it only through read_counter(), a relaxed atomic load in code
// that TSan does not instrument: the statistics readers accept a value that is a moment old.
struct OwnerCounter {
  uint64_t value = 0;
  HS_ALWAYS_INLINE void add(uint64_t n) { value += n; }
  // A volatile load (one aligned mov on x86-64): not an atomic builtin, which TSan would still
  // instrument inside the no_sanitize("thread") readers and report against the plain add.
  __attribute__((no_sanitize("thread"))) uint64_t get() const {
    return *static_cast<const volatile uint64_t*>(&value);
  }
};

// The fast paths count one event per block in its size class (one add per malloc and per
// free); counts and bytes of all classes are summed when the statistics are read. The plain
// counters take what the slow paths count (huge blocks, remote frees, heap teardown).
struct HeapCounters {
  OwnerCounter bin_allocs[kBinCount];
  OwnerCounter bin_frees[kBinCount];
  OwnerCounter alloc_count;
  OwnerCounter free_count;
  OwnerCounter requested_bytes;
  OwnerCounter allocated_total;  // block bytes handed out (cumulative)
  OwnerCounter freed_total;      // block bytes given back (cumulative)
};

enum PageFlags : uint8_t {
  kPageInFull = 1,    // page sits in the heap's full list
  kPageChecked = 4,   // double/invalid free checks requested
  kPageHuge = 8,      // a dedicated mapping holding one block
  kPageSampled = 16,  // the profiler sampled a block here (see sample_bits)
  kPageLarge = 32,    // one block per page: frees take the generic path (page_retire decides)
};

// 128 bytes, so pointer -> page is a shift rather than a multiply on the free fast path.
// Two cache lines by writer: the first is the owner's (allocation pops and local frees write
// it), the second is what other threads' frees read and the one word they write
// (thread_free), so a remote free never steals the line the owner's malloc is writing.
struct alignas(128) Page {
  // ---- owner line ----
  Block* free;        // blocks ready for allocation (owner only)
  Block* local_free;  // owner's slow-path frees and collected remote frees
  // Live blocks, including remote frees not yet collected, plus keep_bias: a multi-block page
  // alone in its queue counts one more, so its last free never reaches zero and free's fast
  // path needs no test to keep it (page_live gives the blocks alone).
  uint32_t used;
  uint32_t capacity;  // blocks carved out so far
  uint32_t reserved;  // blocks that fit in the page
  uint8_t bin;
  uint8_t keep_bias;  // 1 while `used` carries the alone-in-its-queue bias (heap.cc)
  Page* next;
  Page* prev;
  // ---- shared line ----
  alignas(64) std::atomic<Block*> thread_free;  // blocks freed by other threads
  // The owner thread's id (0 when abandoned or huge) in the low bits and the PageFlags in
  // the top byte (kPageFlagShift), so free's fast path tests "mine, and no flag set" with a
  // single compare against the thread pointer. Flags change by atomic RMW: the profiler sets
  // and clears kPageSampled from other threads; use the page_owner/page_flags helpers below.
  std::atomic<uintptr_t> owner_word;
  std::atomic<uint8_t> remote_in_full;  // mirror of kPageInFull for remote freers
  std::atomic<uint8_t> huge_tracked;    // huge page linked in its first-class heap's list
  uint16_t slice_count;                 // slices spanned (0 for a slice that is not a span start)
  uint16_t slice_back;                  // distance to the span's first slice
  size_t block_size;
  uint8_t* area;
  Heap* heap;  // owning heap (nullptr when abandoned); written by the owner, read by others
  // Profiler: one bit per block, set while that block is a live sample (profiler memory),
  // and the number of live samples, under the profiler lock (kPageSampled clears at zero).
  std::atomic<uint64_t*> sample_bits;
  uint32_t sampled_count;
};
static_assert(sizeof(Page) == 128);

HS_ALWAYS_INLINE uint32_t page_live(const Page* page) { return page->used - page->keep_bias; }

// User-space thread pointers (and so thread ids) leave the top byte zero on every 64-bit
// target we run on (x86-64 with 4- or 5-level paging, AArch64); thread_heap_init checks it.
inline constexpr unsigned kPageFlagShift = 56;
inline constexpr uintptr_t kOwnerTidMask = (uintptr_t{1} << kPageFlagShift) - 1;

HS_ALWAYS_INLINE uint8_t page_flags(const Page* page) {
  return static_cast<uint8_t>(page->owner_word.load(std::memory_order_relaxed) >> kPageFlagShift);
}
HS_ALWAYS_INLINE uintptr_t page_owner_tid(const Page* page,
                                          std::memory_order order = std::memory_order_relaxed) {
  return page->owner_word.load(order) & kOwnerTidMask;
}
// Read-modify-write: the profiler sets and clears kPageSampled from other threads.
inline void page_flags_set(Page* page, uint8_t bits,
                           std::memory_order order = std::memory_order_relaxed) {
  page->owner_word.fetch_or(uintptr_t{bits} << kPageFlagShift, order);
}
inline void page_flags_clear(Page* page, uint8_t bits) {
  page->owner_word.fetch_and(~(uintptr_t{bits} << kPageFlagShift), std::memory_order_relaxed);
}
// A huge mapping or a one-block page (large, growth span, a sample's own page): the profiler
// needs no bitmap there, the page's flag says it all.
HS_ALWAYS_INLINE bool page_holds_one_block(const Page* page) {
  return (page_flags(page) & (kPageHuge | kPageLarge)) != 0;
}

// Whether the block at p (on a normal page) is a live profiler sample: its bit in the page's
// sample bitmap. Stable while the caller owns the block: only its allocation sets the bit.
HS_ALWAYS_INLINE bool page_block_is_sample(const Page* page, const void* p) {
  const uint64_t* bitmap = page->sample_bits.load(std::memory_order_acquire);
  if (bitmap == nullptr) return false;
  // Pages span at most kLargeMax bytes: a 32-bit divide, cheaper than a 64-bit one.
  static_assert(kLargeMax <= UINT32_MAX);
  uint32_t offset = static_cast<uint32_t>(static_cast<const uint8_t*>(p) - page->area);
  size_t bit = offset / static_cast<uint32_t>(page->block_size);
  return (__atomic_load_n(&bitmap[bit / 64], __ATOMIC_ACQUIRE) & (uint64_t{1} << (bit % 64))) != 0;
}

// Sets the owner, keeping the flags (which another thread may be changing meanwhile).
inline void page_set_owner(Page* page, uintptr_t tid, std::memory_order order) {
  uintptr_t word = page->owner_word.load(std::memory_order_relaxed);
  while (!page->owner_word.compare_exchange_weak(word, (word & ~kOwnerTidMask) | tid, order,
                                                 std::memory_order_relaxed)) {
  }
}
// A page nobody else can see yet (being set up or torn down): owner and flags in one store.
inline void page_init_owner(Page* page, uintptr_t tid, uint8_t flags) {
  page->owner_word.store(tid | (uintptr_t{flags} << kPageFlagShift), std::memory_order_relaxed);
}

enum class SegmentKind : uint8_t { kNormal = 1, kHuge = 2 };

struct Segment {
  SegmentKind kind;
  size_t mapped_size;
  void* mapping;      // start of the OS mapping (== this, except for over-aligned huge blocks)
  ThreadData* owner;  // nullptr when abandoned
  Segment* next;      // owner's segment list, or the abandoned list (under its lock)
  Segment* prev;
  bool abandoned;          // on the abandoned list (guarded by the abandoned-list lock)
  bool freed_into;         // abandoned, and freed into by a thread that could not adopt it
  SliceMap free_slices;    // slices that belong to no page
  SliceMap dirty_slices;   // free slices that may still be resident (to purge)
  SliceMap young_slices;   // dirty slices freed after purge_deadline was set: wait a round more
  SliceMap purged_slices;  // free slices purged since they were last used (reuse refaults)
  int64_t purge_deadline;  // when the old dirty slices should be purged (ms), 0 when none
  int64_t last_purge_ms;   // when slices of this segment were last purged
  Page pages[kSlicesPerSegment];
};
static_assert(sizeof(Segment) <= kSliceSize * kHeaderSlices);
static_assert(offsetof(Segment, pages) + sizeof(Page) <= kHugeBlockOffset);

struct PageQueue {
  Page* first = nullptr;
  Page* last = nullptr;
};

extern Page g_empty_page;

// The direct table starts out pointing every slot at the (always empty) page, so a heap
// that has allocated nothing yet, and the static empty heap, miss into the generic path.
struct DirectTable {
  Page* slots[kDirectSlots];         // (size+15)/16, sizes up to kSmallDirectMax
  Page* medium[kMediumDirectSlots];  // (size+255)/256, sizes above that up to kMediumBlockMax
  constexpr DirectTable() : slots(), medium() {
    for (Page*& slot : slots) slot = &g_empty_page;
    for (Page*& slot : medium) slot = &g_empty_page;
  }
};

struct alignas(64) Heap {
  DirectTable direct;  // size -> the first page of its class, maybe with free blocks
  // Bytes until the next profiler sample. With the profiler compiled in it doubles as the
  // requested-bytes counter (requested = requested_folded + countdown_armed - countdown), so
  // the fast path pays one subtract-and-branch in place of an add, not on top of it.
  int64_t sample_countdown = INT64_MAX;
  int64_t countdown_armed = INT64_MAX;  // the value sample_countdown was last set to
  uint64_t requested_folded = 0;        // requested bytes counted before that
  uintptr_t thread_id = 0;
  HeapCounters counters;
  PageQueue queues[kBinCount];
  PageQueue full;
  // The one empty large page (a single-block page) kept for a malloc/free ping-pong; keeping
  // one per class would hold megabytes per class resident when a program cycles sizes.
  Page* kept_large = nullptr;
  std::atomic<bool> remote_hint{false};  // a remote free landed in a full page
  ThreadData* td = nullptr;
  bool is_default = false;
  Heap* registry_next = nullptr;  // all live heaps (for statistics) / pool free list
  Heap* registry_prev = nullptr;
  Heap* user_next = nullptr;           // the thread's first-class heaps
  std::atomic<uint32_t> huge_lock{0};  // guards huge_list (first-class heaps only)
  Page* huge_list = nullptr;
  // Profiler state of this heap (profiler/sampler.cc), touched on the slow path only.
  uint64_t prof_generation = 0;                // the sampling generation the countdown belongs to
  uint64_t prof_interval = 0;                  // mean sample distance now (0: not sampling)
  uint64_t prof_bytes_since_sample = 0;        // distance covered by the last sample
  hs_profiler_t* prof_owner = nullptr;         // user profiler sampling this heap now
  void* prof_last_sample = nullptr;            // the block record_sample saw last
  hs_profiler_t* attached_profiler = nullptr;  // hs_heap_profile
  bool profile_disabled = false;               // hs_heap_profile_disable
};

struct ThreadData {
  Heap* default_heap;
  Segment* segments;  // every segment this thread owns
  int64_t purge_deadline;
  // Adaptive purge delay (segment.cc): doubles, up to purge_delay_max, when memory purged
  // recently is taken again (purging it only cost a madvise and the page faults); halves
  // back toward purge_delay after a purge round with no such refault.
  int64_t purge_delay_ms;    // 0: the option's value
  bool refaulted;            // purged memory was reused since the last purge round
  bool in_purge;             // purge_due is running (it frees pages, which would re-enter it)
  uint32_t kept_page_frees;  // page_retire kept a class's last page: look at the clock every 16
  Heap* user_heaps;
  uint64_t ordinal;              // creation order of the thread (profiler seeding)
  uint64_t prof_rng;             // the thread's sampling stream (splitmix64 state)
  uint64_t prof_rng_generation;  // the seed generation prof_rng was seeded for
};

// ---- globals ---------------------------------------------------------------------------------
extern Heap g_empty_heap;
// __thread (not thread_local): constant-initialized, so no TLS wrapper call on the fast path.
extern __thread Heap* tls_heap __attribute__((tls_model("initial-exec")));

// ---- segment map (segment.cc): O(1) "is this ours" for any pointer ---------------------------
inline constexpr size_t kAddressBits = 47;
inline constexpr size_t kSegmentMapSize = size_t{1} << (kAddressBits - kSegmentShift);
// kMapSegment: a normal segment starts here (pointer -> page is arithmetic). kMapHuge: a huge
// mapping starts here, kMapHugeTail: it continues; both resolve to the mapping's pages[0]
// on the slow path, so a huge segment never initializes its other slice descriptors.
enum SegmentMapEntry : uint8_t { kMapNone = 0, kMapSegment = 1, kMapHugeTail = 2, kMapHuge = 3 };
extern std::atomic<uint8_t> g_segment_map[kSegmentMapSize];

// ---- segment.cc --------------------------------------------------------------------------------
Page* span_alloc(ThreadData* td, size_t slices);
bool span_grow(ThreadData* td, Page* page, size_t slices);  // over free slices right after it
bool large_grow_in_place(Page* page, size_t new_size);      // owner's one-block page, see heap.cc
void* malloc_one_block_page(Heap* heap, size_t size);       // growing realloc, sampled small block
// Returns the page's slices to its segment; an emptied segment is released when allowed.
void span_free(ThreadData* td, Page* page, bool allow_release = true);
void segments_unmap_if_empty(ThreadData* td);
void segment_detach(ThreadData* td, Segment* segment);
void segment_attach(ThreadData* td, Segment* segment);
void segment_purge_now(Segment* segment);
void segment_unmap_now(Segment* segment);
bool segment_is_empty(const Segment* segment);
bool segment_has_run(const Segment* segment, size_t slices);
void segment_map_set(const Segment* segment, size_t mapped_size, bool present);
Segment* segment_of_slow(const void* p);  // nullptr if not ours
void purge_due(ThreadData* td, bool force);
void purge_schedule(ThreadData* td);  // make sure a purge round comes after the delay
void segment_release(ThreadData* td, Segment* segment);

// ---- page.cc -----------------------------------------------------------------------------------
// one_block: a single block however many would fit (a growth span, see malloc_one_block_page).
void page_init(Page* page, Heap* heap, size_t bin, bool one_block = false);
bool page_extend(Page* page);       // carve more blocks out of the page; false if none left
uint32_t page_collect(Page* page);  // merge local and remote frees; returns remote count
Block* block_start(const Page* page, const void* p);

// ---- heap.cc -----------------------------------------------------------------------------------
// count_sample: false when the fast path already charged the sample countdown.
void* malloc_generic(Heap* heap, size_t size, bool count_sample = true);
void* malloc_sampled(Heap* heap, size_t size);
void free_unusual(void* p);  // huge tails and foreign pointers
void heap_delete_migrate(Heap* heap);
void heap_destroy_pages(Heap* heap);
void free_generic(Page* page, void* p);
void page_retire(Heap* heap, Page* page);
void page_set_keep_bias(Page* page, bool on);
void heap_init(Heap* heap, ThreadData* td, bool is_default);
void heap_adopt_page(Heap* heap, Page* page);  // put a reclaimed page into heap's queues
void heap_release_idle_pages(Heap* heap);      // the kept last page of a class, if empty
void heap_release_all(Heap* heap);             // collect everything; free empty pages

// ---- thread.cc ---------------------------------------------------------------------------------
void process_init();
Heap* thread_heap_init();  // the calling thread's default heap, creating it when needed
// Called first thing in a thread created through our pthread_create wrapper (1, 2, ... in
// creation order); threads without one are numbered by their first allocation instead.
void set_thread_creation_ordinal(uint64_t ordinal);
Heap* heap_struct_alloc();
void heap_struct_free(Heap* heap);
void registry_add(Heap* heap);
void registry_remove(Heap* heap);
Segment* reclaim_abandoned(ThreadData* td, size_t slices_wanted);
void reclaim_all_abandoned(ThreadData* td);
bool reclaim_segment_on_free(Segment* segment);  // before freeing into an abandoned page
// Some abandoned segment was freed into and nobody adopted it (freed_into set, or remote
// frees left in its pages): the next live thread's slow path or hs_collect adopts it.
extern std::atomic<bool> g_abandoned_freed_into;
void reclaim_freed_into(ThreadData* td);

// ---- huge.cc -----------------------------------------------------------------------------------
void* huge_alloc(Heap* heap, size_t size, size_t alignment, bool zero);
void huge_free(Page* page);
// nullptr: copy instead (or with may_move false: cannot grow where it is)
void* huge_realloc(Heap* heap, Page* huge, size_t new_size, bool zero, bool may_move);
void huge_cache_trim(bool force);
void huge_fork_lock(bool acquire);
void registry_visit(void (*visit)(const Heap*, void*), void* arg);

// ---- profiler hooks (profiler/sampler.cc; absent when HS_PROFILER is 0) ------------------------
// The countdown crossed zero with this allocation: true if it is a sample (re-arms either way).
bool sample_countdown_expired(Heap* heap, size_t size);
void record_sample(Heap* heap, void* p, size_t size);  // after the allocation succeeded
void sampled_free(Page* page, void* p);                // page has kPageSampled
void sampled_resize(Page* page, void* p, size_t new_size);
void sampled_set_requested(Page* page, void* p, size_t size);  // silent size correction
void prof_heap_destroy(Heap* heap);
void prof_page_release(Page* page);  // page->sample_bits is set
void prof_heap_init(Heap* heap);
void prof_rearm_own_heaps();
void prof_process_init();   // auto-start from the environment
void prof_fork(int phase);  // 0 prepare, 1 parent, 2 child

// ---- statistics (stats.cc) ---------------------------------------------------------------------
struct GlobalCounters {
  std::atomic<uint64_t> reserved_bytes;
  std::atomic<uint64_t> committed_bytes;
  std::atomic<uint64_t> purged_bytes;
  std::atomic<uint64_t> segments;
  std::atomic<uint64_t> pages;
  std::atomic<uint64_t> heaps;
  std::atomic<uint64_t> threads;
  std::atomic<uint64_t> huge_count;
  std::atomic<uint64_t> huge_remaps;  // huge reallocs served by remapping instead of copying
  std::atomic<uint64_t> abandoned_segments;
  std::atomic<uint64_t> committed_peak;
  // Counters of heaps that no longer exist.
  std::atomic<uint64_t> dead_alloc_count, dead_free_count, dead_requested, dead_allocated,
      dead_freed;
};
extern GlobalCounters g_counters;
void counters_merge_dead(const Heap* heap);
uint64_t heap_requested_bytes(const Heap* heap);  // exact for the owner, a moment old for others

// Re-arms the countdown (owner thread only), keeping the requested-bytes count exact.
inline void countdown_set(Heap* heap, int64_t value) {
  heap->requested_folded += static_cast<uint64_t>(heap->countdown_armed - heap->sample_countdown);
  heap->countdown_armed = value;
  heap->sample_countdown = value;
}
// Moves the next sample point by delta bytes without counting them as requested.
inline void countdown_shift(Heap* heap, int64_t delta) {
  heap->sample_countdown += delta;
  heap->countdown_armed += delta;
}
void note_committed(uint64_t added);  // committed_bytes += added, tracking the peak

// ---- options (options.cc) ---------------------------------------------------------------------
long option(hs_option_t which);
void options_init();

// ---- small spin lock (slow paths only) ----------------------------------------------------------
void spin_lock(std::atomic<uint32_t>& word);
inline void spin_unlock(std::atomic<uint32_t>& word) { word.store(0, std::memory_order_release); }

}  // namespace heapscope
