// Process and thread life cycle: one-time initialization, per-thread heaps (created on the
// first allocation, torn down by a thread-exit key), abandonment of an exited thread's
// segments and their reclamation by live threads, the heap-struct pool, and fork safety.
#include "core/thread.h"

#include <new>

#include "core/hardening.h"
#include "core/heap.h"
#include "core/huge.h"
#include "core/idle_owner.h"
#include "core/options.h"
#include "core/page.h"
#include "core/page_counts.h"
#include "core/page_queue.h"
#include "core/profiler_hooks.h"
#include "core/purge_thread.h"
#include "core/segment.h"
#include "core/spin_lock.h"
#include "core/stats.h"
#include "core/takeover.h"
#include "events/events_hooks.h"
#include "platform/platform.h"

namespace heapscope {

Page g_empty_page;
constinit Heap g_empty_heap;
HS_THREAD_LOCAL(Heap*, tls_heap, &g_empty_heap);
static HS_THREAD_LOCAL(uint64_t, t_creation_ordinal, 0);
static HS_THREAD_LOCAL(int64_t, t_started_ms, 0);

HS_HOT_TEXT void set_thread_creation_ordinal(uint64_t ordinal) {
  t_creation_ordinal = ordinal;
  t_started_ms = os::now_ms();
}

HS_HOT_TEXT void spin_lock(std::atomic<uint32_t>& word) {
  for (;;) {
    if (word.exchange(1, std::memory_order_acquire) == 0) return;
    while (word.load(std::memory_order_relaxed) != 0) os::yield();
  }
}

namespace {

// Global slow-path locks, in the order fork's prepare handler takes them.
std::atomic<uint32_t> g_pool_lock{0};
std::atomic<uint32_t> g_registry_lock{0};
std::atomic<uint32_t> g_abandoned_lock{0};

Heap* g_pool_free = nullptr;  // recycled heap slots (linked through registry_next)
Heap* g_registry = nullptr;   // live heaps
Segment* g_abandoned = nullptr;
// Empty segments on the abandoned list (under its lock). A few are kept resident for the
// next thread that needs a segment (threads created in rounds then reuse the pages their
// predecessors touched instead of faulting fresh ones in); beyond the bound they are unmapped
// at once, so any number of exiting threads leaves at most this many behind. Two: a round of
// two threads leaves two (docs/allocator.md, "Thread exit").
// A kept one stays resident only in the slices its last owner used and its lowest ones
// (segment_trim_dirty), so a producer that made many MiB and exited does not leave them all
// resident.
size_t g_abandoned_empty = 0;
constexpr size_t kMaxEmptyAbandoned = 2;
// What the kept ones keep resident, together (the first takes what it needs, the second
// what is left), and the sum of their Segment::kept_resident. 3 MiB: two threads' slices in
// rounds of hs-alloc-bench's rounds/2x2000 creep up to 2.0-2.4 MiB (docs/allocator.md).
constexpr size_t kEmptyAbandonedResident = size_t{3} << 20;
size_t g_abandoned_empty_resident = 0;

// With the purge thread on, a segment whose last owner had freed nearly all it made there
// before it exited, emptied since by the frees of a thread created before that owner (a
// pool's joiner freeing the few objects a worker left, the next pool about to start), is held
// whole instead, every resident slice, until the list's purge deadline (purge_delay_max), for
// the threads that come next or still run: trimmed to the budget above, eight Python threads
// a round making 22 MB each faulted all of it in again every round (docs/allocator.md,
// "Thread exit"). Only with that thread, whose timer unmaps such segments on the deadline:
// without it, only allocator calls would, and a thread that frees an exited thread's blocks
// and then allocates nothing would keep them. By default the first such segment starts the
// thread (hold_emptied_segment). While it runs, a segment found empty at its owner's exit is
// held the same way when that thread freed its own blocks (a pool worker draining what it
// made; abandon_segments). Not a segment its owner left full (a producer's
// blocks, which consumers free while the next producers run), nor one emptied by younger
// threads (a pool's next round freeing what the last one kept), nor one empty at the exit of
// a thread whose blocks others freed (a producer): the threads then running have memory of
// their own, and holding such segments raised the peak (docs/allocator.md).
// Bounded, so any number of exiting threads holds at most this much between them.
constexpr size_t kHeldEmptyResident = size_t{256} << 20;
size_t g_held_empty_resident = 0;

// A default heap and its thread data live together in one pool slot.
// The HeapShared part is constructed once, when the slot is first carved, and never again:
// threads holding a stale pointer to the slot's heap may be spinning on its lock.
struct ThreadSlot {
  Heap heap;
  ThreadData td;
  HeapShared shared;
};

// Slots of the newest chunk never handed out: carved one at a time, so a process with one
// thread touches one slot's pages rather than every page of the chunk.
ThreadSlot* g_pool_fresh = nullptr;
size_t g_pool_fresh_count = 0;

std::atomic<int> g_init_state{0};  // 0 none, 1 running, 2 done
bool g_adopt_latest = false;       // test-only: set by process_init before it publishes "done"

// Threads numbered by first allocation (no creation ordinal): the first is the main thread
// (0); later ones are placed far above every creation ordinal.
std::atomic<uint64_t> g_thread_ordinal{0};
constexpr uint64_t kUnorderedThreadBase = uint64_t{1} << 40;

// The memory-events locks come first (a visitor may allocate while it holds one), then the
// profiler's: profiler code never takes the allocator's locks while holding it, and this
// order keeps it that way across fork.
// The forking thread's own slow-path and full-list locks too: a thread sweeping its pages
// (idle_owner.cc) or taking one over (takeover.cc) may hold them, and in the child that
// thread would never release them.
HS_THREAD_LOCAL(Heap*, t_fork_locked_heap, nullptr);  // two threads may fork at once
void fork_prepare() {
  events_fork(0);
#if HS_PROFILER
  prof_fork(0);
#endif
  if (tls_heap != &g_empty_heap) {
    t_fork_locked_heap = owner_slow_path_enter(tls_heap);
    full_list_lock(tls_heap);
  }
  spin_lock(g_pool_lock);
  spin_lock(g_registry_lock);
  spin_lock(g_abandoned_lock);
  huge_fork_lock(true);
}
void fork_parent() {
  huge_fork_lock(false);
  spin_unlock(g_abandoned_lock);
  spin_unlock(g_registry_lock);
  spin_unlock(g_pool_lock);
  if (tls_heap != &g_empty_heap) {
    full_list_unlock(tls_heap);
    owner_slow_path_exit(t_fork_locked_heap);
  }
#if HS_PROFILER
  prof_fork(1);
#endif
  events_fork(1);
}
void fork_child() {
  // Only the forking thread exists in the child; other threads' heaps stay as they were
  // (their pages are used again only by frees into them, and their full pages may be taken:
  // a full-list lock a vanished thread held stays held, which a taker only tries), and every
  // global lock starts released.
  huge_fork_lock(false);
  g_abandoned_lock.store(0, std::memory_order_relaxed);
  g_registry_lock.store(0, std::memory_order_relaxed);
  g_pool_lock.store(0, std::memory_order_relaxed);
  if (tls_heap != &g_empty_heap) {
    full_list_unlock(tls_heap);
    owner_slow_path_exit(t_fork_locked_heap);
  }
#if HS_PROFILER
  prof_fork(2);
#endif
  events_fork(2);
  purge_thread_fork_child();
}

void thread_done(void* value);

}  // namespace

HS_HOT_TEXT void process_init() {
  int expected = 0;
  if (!g_init_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    // Another thread is initializing: wait for it. The initializing thread itself never
    // comes back here, because the steps below do not allocate.
    while (g_init_state.load(std::memory_order_acquire) != 2) os::yield();
    return;
  }
  options_init();
  hardening_init();  // before the first block is carved: the free lists' links depend on it
  // Test-only: HEAPSCOPE_TEST_NO_THREAD_EXIT_HOOK=1 creates the key without its callback, so an
  // exited thread's heap is never torn down: the negative control of the thread-exit test
  // (engine/docs/platforms.md). Read here, once, not as an option: nothing else may turn it off.
  const char* no_hook = os::get_env("HEAPSCOPE_TEST_NO_THREAD_EXIT_HOOK");
  const bool hook = no_hook == nullptr || no_hook[0] != '1';
  os::thread_exit_key_create(hook ? thread_done : nullptr);
  // Test-only: HEAPSCOPE_TEST_ADOPT_LATEST=1 adopts the latest abandoned segment whatever it
  // holds: the positive control of the pool-rounds test (pop_abandoned).
  const char* adopt_latest = os::get_env("HEAPSCOPE_TEST_ADOPT_LATEST");
  g_adopt_latest = adopt_latest != nullptr && adopt_latest[0] == '1';
  os::at_fork(fork_prepare, fork_parent, fork_child);
  g_init_state.store(2, std::memory_order_release);
#if HS_PROFILER
  prof_process_init();  // HEAPSCOPE_PROF=1 starts sampling before the first allocation
#endif
  events_process_init();
}

HS_HOT_TEXT Heap* heap_struct_alloc() {
  spin_lock(g_pool_lock);
  Heap* slot = g_pool_free;
  bool fresh = slot == nullptr;
  if (!fresh) {
    g_pool_free = slot->registry_next;
  } else {
    if (g_pool_fresh_count == 0) {
      // A fresh chunk of slots; heap memory is never returned to the OS, which is what makes
      // a stale pointer to a heap (held by a remote freer) harmless.
      constexpr size_t kChunk = 64 * 1024;
      auto* chunk = static_cast<ThreadSlot*>(os::map_aligned(kChunk, os::page_size()));
      if (chunk == nullptr) {
        spin_unlock(g_pool_lock);
        return nullptr;
      }
      g_pool_fresh = chunk;
      g_pool_fresh_count = kChunk / sizeof(ThreadSlot);
    }
    slot = &g_pool_fresh->heap;
    ++g_pool_fresh;
    --g_pool_fresh_count;
  }
  spin_unlock(g_pool_lock);
  ThreadSlot* thread_slot = reinterpret_cast<ThreadSlot*>(slot);
  new (&thread_slot->heap) Heap();
  new (&thread_slot->td) ThreadData();
  if (fresh) new (&thread_slot->shared) HeapShared();
  g_counters.heaps.fetch_add(1, std::memory_order_relaxed);
  return &thread_slot->heap;
}

HS_HOT_TEXT HeapShared* heap_shared(const Heap* heap) {
  return &reinterpret_cast<ThreadSlot*>(const_cast<Heap*>(heap))->shared;
}

void heap_struct_free(Heap* heap) {
  g_counters.heaps.fetch_sub(1, std::memory_order_relaxed);
  spin_lock(g_pool_lock);
  heap->registry_next = g_pool_free;
  g_pool_free = heap;
  spin_unlock(g_pool_lock);
}

void registry_add(Heap* heap) {
  spin_lock(g_registry_lock);
  heap->registry_prev = nullptr;
  heap->registry_next = g_registry;
  if (g_registry != nullptr) g_registry->registry_prev = heap;
  g_registry = heap;
  spin_unlock(g_registry_lock);
}

size_t registry_snapshot(Heap** out, size_t max, size_t skip) {
  size_t count = 0;
  size_t index = 0;
  spin_lock(g_registry_lock);
  for (Heap* heap = g_registry; heap != nullptr && count < max; heap = heap->registry_next) {
    if (index++ >= skip) out[count++] = heap;
  }
  spin_unlock(g_registry_lock);
  return count;
}

HS_HOT_TEXT void registry_remove(Heap* heap) {
  spin_lock(g_registry_lock);
  if (heap->registry_prev != nullptr)
    heap->registry_prev->registry_next = heap->registry_next;
  else
    g_registry = heap->registry_next;
  if (heap->registry_next != nullptr) heap->registry_next->registry_prev = heap->registry_prev;
  heap->registry_next = heap->registry_prev = nullptr;
  // Merge under the lock so a concurrent statistics reader never sees the counts twice or
  // not at all.
  counters_merge_dead(heap);
  spin_unlock(g_registry_lock);
}

void registry_visit(void (*visit)(const Heap*, void*), void* arg) {
  spin_lock(g_registry_lock);
  for (Heap* heap = g_registry; heap != nullptr; heap = heap->registry_next) visit(heap, arg);
  spin_unlock(g_registry_lock);
}

void heaps_divert_direct_tables() {
  // The sync point pairs with direct_update's (page_queue.h): a slot stored concurrently is
  // either overwritten here or re-diverted by its owner, who then sees the gate open.
  events_sync_point();
  spin_lock(g_registry_lock);
  for (Heap* heap = g_registry; heap != nullptr; heap = heap->registry_next) {
    for (Page*& slot : heap->direct.slots) direct_slot_store(&slot, &g_empty_page);
    for (Page*& slot : heap->direct.medium) direct_slot_store(&slot, &g_empty_page);
  }
  spin_unlock(g_registry_lock);
}

HS_HOT_TEXT Heap* thread_heap_init() {
  if (tls_heap != &g_empty_heap) return tls_heap;
  process_init();
  Heap* heap = heap_struct_alloc();
  if (heap == nullptr) return nullptr;
  ThreadData* td = &reinterpret_cast<ThreadSlot*>(heap)->td;
  if (t_creation_ordinal != 0) {
    td->ordinal = t_creation_ordinal;
    td->started_ms = t_started_ms;
  } else {
    // Not started through our wrapper: numbered by its first allocation, in no batch (that
    // allocation may come long after it started: a pool thread frees its share of the last
    // round's blocks first).
    uint64_t n = g_thread_ordinal.fetch_add(1, std::memory_order_relaxed);
    td->ordinal = n == 0 ? 0 : kUnorderedThreadBase + n;
    td->started_ms = 0;
  }
  heap_init(heap, td, true);
  td->default_heap = heap;
  tls_heap = heap;
  {
    // A thread sweeping this slot's previous heap through a stale pointer reads the id under
    // the slow-path lock: once it reads ours, it also sees the heap set up.
    OwnerSlowPath slow_path(heap);
    takeover_open(heap, true);
  }
  registry_add(heap);
  g_counters.threads.fetch_add(1, std::memory_order_relaxed);
  // May allocate (glibc's second-level key table); the heap is already in place for that.
  os::set_thread_value(heap);
  return heap;
}

// ---- abandon and reclaim -----------------------------------------------------------------------
// The abandoned list is doubly linked (through next/prev, free while no thread owns the
// segment) so a free can take out the one segment it touched; callers hold g_abandoned_lock.
static void abandoned_push(Segment* segment) {
  if (segment_is_empty(segment) && !segment->held_whole) ++g_abandoned_empty;
  segment->prev = nullptr;
  segment->next = g_abandoned;
  if (g_abandoned != nullptr) g_abandoned->prev = segment;
  __atomic_store_n(&segment->abandoned, true, __ATOMIC_RELAXED);  // also read without the lock
  __atomic_store_n(&g_abandoned, segment, __ATOMIC_RELAXED);
}
HS_HOT_TEXT static void abandoned_unlink(Segment* segment) {
  if (segment->held_whole) {
    g_held_empty_resident -= segment->kept_resident;
    segment->held_whole = false;
  } else {
    if (segment_is_empty(segment)) --g_abandoned_empty;
    g_abandoned_empty_resident -= segment->kept_resident;
  }
  segment->kept_resident = 0;
  if (segment->prev != nullptr) {
    segment->prev->next = segment->next;
  } else {
    __atomic_store_n(&g_abandoned, segment->next, __ATOMIC_RELAXED);
  }
  if (segment->next != nullptr) segment->next->prev = segment->prev;
  segment->next = segment->prev = nullptr;
  __atomic_store_n(&segment->abandoned, false, __ATOMIC_RELAXED);
}

// An emptied segment stays on the list with what is left of the shared budget resident in its
// lowest free slices (where the next thread's pages go); the rest is purged now.
static void keep_empty_abandoned(Segment* segment) {
  const size_t left = kEmptyAbandonedResident - g_abandoned_empty_resident;
  segment->kept_resident = segment_trim_dirty(segment, left);
  g_abandoned_empty_resident += segment->kept_resident;
}

// Whether a thread leaving a segment had freed nearly all it made there: at most a ninth of
// the slices it used still hold pages. Asked at every thread exit unless the purge thread
// option is 0 (purge_thread_may_hold).
HS_HOT_TEXT static bool drained_by_owner(const Segment* segment) {
  const size_t in_use = (~segment->free_slices & kUsableSlices).count();
  return in_use * 8 <= (segment->free_slices & segment->dirty_slices).count();
}

// Holds of emptied segments need the purge thread's timer: it runs, or (option -1) is started
// by the first hold worth making (hold_emptied_segment).
HS_HOT_TEXT static bool purge_thread_may_hold() {
  return purge_thread_running() || purge_thread_starts_on_demand();
}

std::atomic<int64_t> g_abandoned_purge_at{0};

// Caller holds g_abandoned_lock. Free slices of an exited thread's segment stay resident for
// purge_delay_max (or are purged at once, or never, as purge_delay says).
HS_HOT_TEXT static void abandoned_schedule_purge(Segment* segment, bool restart) {
  if (segment->dirty_slices.none()) return;
  int64_t delay = option(hs_option_purge_delay);
  if (delay == 0) segment_purge_now(segment);
  if (delay <= 0) return;
  int64_t longest = option(hs_option_purge_delay_max);
  if (longest > delay) delay = longest;
  if (restart || segment->purge_deadline == 0) segment->purge_deadline = os::now_ms() + delay;
  int64_t at = g_abandoned_purge_at.load(std::memory_order_relaxed);
  if (at == 0 || segment->purge_deadline < at) {
    g_abandoned_purge_at.store(segment->purge_deadline, std::memory_order_relaxed);
  }
}

HS_HOT_TEXT void abandoned_purge_due(int64_t now) {
  int64_t at = g_abandoned_purge_at.load(std::memory_order_relaxed);
  if (at == 0 || now < at) return;
  spin_lock(g_abandoned_lock);
  int64_t next = 0;
  Segment* segment = g_abandoned;
  while (segment != nullptr) {
    Segment* following = segment->next;
    if (segment->purge_deadline != 0 && segment->purge_deadline <= now) {
      segment->purge_deadline = 0;
      if (segment_is_empty(segment)) {
        abandoned_unlink(segment);
        g_counters.abandoned_segments.fetch_sub(1, std::memory_order_relaxed);
        segment_unmap_now(segment);
      } else {
        segment_purge_now(segment);
      }
    } else if (segment->purge_deadline != 0 && (next == 0 || segment->purge_deadline < next)) {
      next = segment->purge_deadline;
    }
    segment = following;
  }
  g_abandoned_purge_at.store(next, std::memory_order_relaxed);
  spin_unlock(g_abandoned_lock);
}

// Leaves a page without owner (caller holds g_abandoned_lock); true if a remote free was
// pushed meanwhile, which the handshake in free_remote may have left for a sweep.
HS_HOT_TEXT static bool page_give_up(Page* page) {
  page->next = page->prev = nullptr;
  page_set_keep_bias(page, false);
  __atomic_store_n(&page->heap, nullptr, __ATOMIC_RELAXED);
  page->remote_in_full.store(1, std::memory_order_seq_cst);
  page_set_owner(page, 0, std::memory_order_release);
  return page->thread_free.load(std::memory_order_seq_cst) != nullptr;
}

// Holds an emptied segment whole on the abandoned list, every resident slice, within the
// budget all held segments share (kHeldEmptyResident); false if it does not fit. Caller holds
// g_abandoned_lock and has checked that the purge thread runs: its timer releases the segment
// on the deadline abandoned_schedule_purge sets.
HS_NOINLINE static bool hold_whole(Segment* segment) {
  const size_t resident = segment_resident_free_bytes(segment);
  if (resident > kHeldEmptyResident - g_held_empty_resident) return false;
  segment->held_whole = true;
  segment->kept_resident = resident;
  g_held_empty_resident += resident;
  return true;
}

// The least an emptied segment holds resident for its hold to start the purge thread (option
// -1): below it, the next threads' faults cost less than a thread of the engine's own.
constexpr size_t kHoldWorthAThread = size_t{4} << 20;

// With the purge thread not running and the option at -1: a segment that would be held if it
// ran asks for it when it holds enough (a flag the next allocation slow path acts on), and
// the holds begin once it runs: until then nothing would release a held segment if no
// allocator call came. Caller holds g_abandoned_lock.
HS_HOT_TEXT static void ask_for_purge_thread_if_worth(const Segment* segment) {
  if (segment_resident_free_bytes(segment) >= kHoldWorthAThread) purge_thread_request();
}

// Whether an exiting thread freed its own blocks: at least three quarters of those it made,
// not counting the ones other threads freed (collected from its pages' remote lists). A pool
// worker that drains what it made does (a Python thread: all of its ~1,800, none remote); a
// producer does not, whether its consumers freed its blocks already (90-100% remote) or not
// yet (still live). Folded counts: thread_done folds them before this.
HS_HOT_TEXT static bool freed_its_own_blocks(const ThreadData* td) {
  const BlockTotals totals = heap_block_totals(td->default_heap);
  const uint64_t own_frees =
      totals.frees > td->remote_frees_collected ? totals.frees - td->remote_frees_collected : 0;
  return own_frees * 4 >= totals.allocations * 3;
}

// Publishing a segment and giving up its pages happen under the list lock, push first: a
// freer that sees a page's owner id at 0 then always finds the segment on the list (or
// already adopted again), never in between. A freer that read the old owner id just before
// and frees remotely is caught by the remote_in_full handshake (free_remote): either it sees
// the flag and asks for a sweep, or the check below sees its block and flags the segment.
// Empty segments are abandoned too: a thread started in place of this one takes them before
// mapping new ones, and the purge deadline unmaps them if none does.
HS_HOT_TEXT static void abandon_segments(ThreadData* td) {
  Segment* segment = td->segments;
  // Segments found empty are held when the thread freed its own blocks and the purge thread
  // runs; with it not yet started (option -1), one worth holding asks for it instead.
  const bool running = purge_thread_running();
  const bool own_frees = purge_thread_may_hold() && freed_its_own_blocks(td);
  const bool may_hold_empty = running && own_frees;
  const bool may_ask = !running && own_frees;
  while (segment != nullptr) {
    Segment* next = segment->next;
    segment_detach(td, segment);
    __atomic_store_n(&segment->owner, nullptr, __ATOMIC_SEQ_CST);
    segment->young_slices = SliceMap{};
    spin_lock(g_abandoned_lock);
    const bool held = may_hold_empty && segment_is_empty(segment) && hold_whole(segment);
    if (may_ask && segment_is_empty(segment)) ask_for_purge_thread_if_worth(segment);
    if (!held && segment_is_empty(segment) && g_abandoned_empty >= kMaxEmptyAbandoned) {
      // No live block points into it, so no freer can reach it: release it here.
      spin_unlock(g_abandoned_lock);
      segment_unmap_now(segment);
      segment = next;
      continue;
    }
    if (!held && segment_is_empty(segment)) keep_empty_abandoned(segment);
    segment->abandoned_by = td->ordinal;
    segment->abandoner_started_ms = td->started_ms;
    segment->drained_by_owner = purge_thread_may_hold() && drained_by_owner(segment);
    abandoned_push(segment);
    abandoned_schedule_purge(segment, true);
    bool freed_meanwhile = false;
    const uintptr_t self = os::thread_id();
    segment_for_each_page(segment, [self, &freed_meanwhile](Page* page) {
      // A page another thread took over stays its; it comes back through return_taken_page.
      const uintptr_t owner = page_owner_tid(page);
      if (owner != self && owner != 0) return;
      if (page_give_up(page)) freed_meanwhile = true;
    });
    if (freed_meanwhile) g_abandoned_freed_into.store(true, std::memory_order_release);
    spin_unlock(g_abandoned_lock);
    g_counters.abandoned_segments.fetch_add(1, std::memory_order_relaxed);
    segment = next;
  }
}

// Claims a page nobody owns (owner id 0) for thread `tid`, keeping its flags; false if
// another thread got it first. Every taker of an ownerless page in a segment that is not
// abandoned goes through this compare-and-swap, so exactly one of them gets it.
static bool page_claim(Page* page, uintptr_t tid) {
  uintptr_t word = page->owner_word.load(std::memory_order_acquire);
  do {
    if ((word & kOwnerTidMask) != 0) return false;
  } while (!page->owner_word.compare_exchange_weak(word, word | tid, std::memory_order_acq_rel,
                                                   std::memory_order_acquire));
  return true;
}

// A claimed page joins heap (collecting its remote frees), or goes back to its segment when
// nothing in it is live (the caller owns the segment).
static void adopt_claimed_page(ThreadData* td, Heap* heap, Page* page) {
  __atomic_store_n(&page->heap, heap, __ATOMIC_RELAXED);
  page_collect(page);
  if (page->used == 0) {
    span_free(td, page, false);
  } else {
    heap_adopt_page(heap, page);
  }
}

// Pages given back into a segment before or while it was adopted: taken over here.
HS_HOT_TEXT static void adopt_returned_pages(ThreadData* td, Segment* segment) {
  if (segment->returned_pages.exchange(0, std::memory_order_seq_cst) == 0) return;
  Heap* heap = td->default_heap;
  PurgeRoundsDeferred no_round_inside(td);  // it could release the segment being walked
  segment_for_each_page(segment, [td, heap](Page* page) {
    if (page_claim(page, heap->thread_id)) adopt_claimed_page(td, heap, page);
  });
}

// The abandoned segment to adopt: of the first kAdoptLookahead on the list, the one with the
// most free slices still resident (the most memory the new owner reuses without faults), the
// latest abandoned on ties. Taking the latest whatever it held, a pool of threads re-created
// for each batch of work left segments still holding the last batch's free memory on the
// list until the frees of their leftovers emptied them, to be purged down to the kept budget
// or unmapped, while the batch mapped fresh ones (docs/allocator.md, "Which abandoned segment
// a thread adopts"). Those not taken still age out.
constexpr int kAdoptLookahead = 16;

HS_HOT_TEXT static Segment* pop_abandoned() {
  if (__atomic_load_n(&g_abandoned, __ATOMIC_RELAXED) == nullptr) return nullptr;
  spin_lock(g_abandoned_lock);
  Segment* segment = g_abandoned;
  size_t most_resident = 0;
  int looked = g_adopt_latest ? kAdoptLookahead : 0;
  for (Segment* s = g_abandoned; s != nullptr && looked < kAdoptLookahead; s = s->next) {
    const size_t resident = (s->free_slices & s->dirty_slices).count();
    if (resident > most_resident) {
      most_resident = resident;
      segment = s;
    }
    ++looked;
  }
  if (segment != nullptr) abandoned_unlink(segment);
  spin_unlock(g_abandoned_lock);
  if (segment != nullptr) g_counters.abandoned_segments.fetch_sub(1, std::memory_order_relaxed);
  return segment;
}

// Takes over an abandoned segment: empty pages are freed, the rest join the default heap.
HS_HOT_TEXT static void adopt_segment(ThreadData* td, Segment* segment) {
  segment_attach(td, segment);
  // Its resident free slices now wait for this thread's purge rounds.
  if (segment->purge_deadline != 0 &&
      (td->purge_deadline == 0 || segment->purge_deadline < td->purge_deadline)) {
    td->purge_deadline = segment->purge_deadline;
  }
  Heap* heap = td->default_heap;
  // Pages other threads took over stay theirs (return_taken_page gives them back).
  PurgeRoundsDeferred no_round_inside(td);  // it could release the segment being walked
  segment_for_each_page(segment, [td, heap](Page* page) {
    if (page_claim(page, heap->thread_id)) adopt_claimed_page(td, heap, page);
  });
  // A page given back after the walk passed it (its returner saw no owner yet).
  adopt_returned_pages(td, segment);
}

// A thread whose own segments have no resident run for a medium or large page would fault
// fresh slices in while an exited thread's free memory sits resident on the list (a pool of
// threads started together: those that finish first leave megabytes that the others could
// use). It takes such a segment over first, if it holds at least this much free and resident
// memory and its last owner was created before the taker or started in the same batch. An
// older thread (a main thread between rounds of workers) would take what the next worker it
// starts adopts at its first allocation, and that worker would then map a fresh segment.
// 4 MiB: the budget of emptied segments kept for new threads (3 MiB) never qualifies.
constexpr size_t kResidentAdoptMinSlices = (size_t{4} << 20) / kSliceSize;

// Threads our pthread_create wrapper started within this long of each other are one batch
// (a pool started in a loop), and take over what any of them left, whichever was created
// first: on few cores the last created often finish first, and the first created, still
// working, faulted fresh memory in beside what those left (the order rule above is for a
// thread that outlives the workers it runs beside; a sibling is one of them).
constexpr int64_t kBatchWindowMs = 100;

static bool may_take_resident(const ThreadData* td, const Segment* segment) {
  if (segment->abandoned_by < td->ordinal) return true;
  return td->started_ms != 0 && segment->abandoner_started_ms != 0 &&
         segment->abandoner_started_ms - td->started_ms <= kBatchWindowMs;
}

Segment* reclaim_abandoned_resident(ThreadData* td, size_t slices) {
  spin_lock(g_abandoned_lock);
  Segment* found = nullptr;
  int looked = 0;
  for (Segment* s = g_abandoned; s != nullptr && looked < kAdoptLookahead; s = s->next) {
    ++looked;
    if (!may_take_resident(td, s)) continue;
    const SliceMap resident_free = s->free_slices & s->dirty_slices;
    if (resident_free.count() >= kResidentAdoptMinSlices && resident_free.find_run(slices) >= 0) {
      found = s;
      break;
    }
  }
  if (found != nullptr) abandoned_unlink(found);
  spin_unlock(g_abandoned_lock);
  if (found == nullptr) return nullptr;
  g_counters.abandoned_segments.fetch_sub(1, std::memory_order_relaxed);
  adopt_segment(td, found);
  return found;
}

HS_HOT_TEXT Segment* reclaim_abandoned(ThreadData* td, size_t slices_wanted) {
  // Bounded work per call; every adopted segment also returns its empty pages.
  for (int tries = 0; tries < 16; ++tries) {
    Segment* segment = pop_abandoned();
    if (segment == nullptr) return nullptr;
    adopt_segment(td, segment);
    if (segment_has_run(segment, slices_wanted)) return segment;
  }
  return nullptr;
}

std::atomic<bool> g_abandoned_freed_into{false};

// A segment a free just emptied (its owner had drained it; see kHeldEmptyResident): held
// whole when the freeing thread is older than that owner, the purge thread runs and the budget
// allows. With the thread not yet started (option -1), it may ask for the thread instead
// (ask_for_purge_thread_if_worth). Out of line: the code every program maps has no room for it.
HS_NOINLINE static bool hold_emptied_segment(Segment* segment) {
  const Heap* heap = tls_heap;
  const bool older =
      heap != &g_empty_heap && heap->td != nullptr && heap->td->ordinal < segment->abandoned_by;
  if (!older) return false;
  if (!purge_thread_running()) {
    if (purge_thread_starts_on_demand()) ask_for_purge_thread_if_worth(segment);
    return false;
  }
  if (!hold_whole(segment)) return false;
  abandoned_schedule_purge(segment, true);
  return true;
}

// Caller holds g_abandoned_lock, which makes it the only thread touching the segment's
// owner-side page fields: other freers wait for the lock, and adopters take the segment off
// the list under it. A page whose blocks are all free goes back to the segment, dirty, to be
// purged on the list's deadline; a segment left without pages stays for the next thread
// that needs one while fewer than kMaxEmptyAbandoned are, else it is unlinked and unmapped.
// Returns true if it was unmapped.
HS_HOT_TEXT static bool abandoned_tidy(Segment* segment, Page* only) {
  bool was_empty = segment_is_empty(segment);
  auto tidy_page = [](Page* page) {
    if (page_owner_tid(page) != 0) return;  // taken over by a live thread: its to collect
    // Remote frees that raced the owner's exit: nobody's page to fold, so counted here.
    if (uint32_t remote = page_collect(page)) page_count_ownerless_frees(page, remote);
    if (page->used == 0) span_free_abandoned(page);
  };
  if (only != nullptr) {
    tidy_page(only);
  } else {
    segment_for_each_page(segment, tidy_page);
  }
  bool empty = segment_is_empty(segment);
  if (empty && !was_empty && segment->drained_by_owner && hold_emptied_segment(segment)) {
    return false;
  }
  if (empty && !was_empty) {
    ++g_abandoned_empty;
    if (g_abandoned_empty <= kMaxEmptyAbandoned) {
      keep_empty_abandoned(segment);
    }
  }
  if (!empty || g_abandoned_empty <= kMaxEmptyAbandoned) {
    abandoned_schedule_purge(segment, false);
    return false;
  }
  abandoned_unlink(segment);
  g_counters.abandoned_segments.fetch_sub(1, std::memory_order_relaxed);
  segment_unmap_now(segment);
  return true;
}

// A free into a page of an exited thread. Nobody would ever collect it, and the freeing
// thread may have no use for the rest of the segment (a consumer draining a producer's
// blocks), so the block is freed in place: an emptied page's slices go back to the segment
// (purged at the list's deadline) and an emptied segment is unmapped (beyond the two kept),
// while the segment's free room stays on the abandoned list for whichever thread next needs
// a segment. The block is live until then, so no one can unmap the segment under this call.
// Returns false when the segment is no longer abandoned (a thread adopted it): the caller
// frees to its new owner instead.
HS_HOT_TEXT bool free_into_abandoned(Segment* segment, Page* page, void* p) {
  if (!__atomic_load_n(&segment->abandoned, __ATOMIC_RELAXED)) return false;
  spin_lock(g_abandoned_lock);
  // A page a live thread took over after the caller read its owner takes a remote free.
  bool abandoned = segment->abandoned && page_owner_tid(page) == 0;
  if (abandoned) {
    Block* block = static_cast<Block*>(p);
    block_set_next(block, page->local_free);
    page->local_free = block;
    page_uncount_frees(page, 1);  // counted by the caller (free_generic)
    abandoned_tidy(segment, page);
  }
  spin_unlock(g_abandoned_lock);
  return abandoned;
}

// Abandoned segments with remote frees nobody collected (a freer that raced the abandonment
// pushed onto thread_free): collect them in place, releasing what became empty.
HS_HOT_TEXT void reclaim_freed_into() {
  if (!g_abandoned_freed_into.exchange(false, std::memory_order_acquire)) return;
  spin_lock(g_abandoned_lock);
  Segment* segment = g_abandoned;
  while (segment != nullptr) {
    Segment* next = segment->next;
    abandoned_tidy(segment, nullptr);
    segment = next;
  }
  spin_unlock(g_abandoned_lock);
}

// ---- pages taken over from other threads' segments, given back ---------------------------------
// (takeover.cc takes an idle owner's full pages; here they go back.) A page given back has
// no owner: in an abandoned segment it is tidied like the segment's other pages; in a
// segment with an owner it waits for that owner's next slow path (reclaim_returned_pages),
// or for a thread that frees into it first (claim_returned_page). An empty one is purged
// first, so an owner that never comes back does not keep it resident.
HS_HOT_TEXT void return_taken_page(Page* page) {
  page_fold_counts(page);  // into the taker's heap, which has the page until page_give_up
  Segment* segment = segment_of_page(page);
  if (page->used == 0) {
    // Still ours, and no block in it is live: nobody else reads or writes its memory. The
    // purge drops the free lists' links with it, so the page is left with nothing carved.
    os::purge(span_start(page), page->slice_count * kSliceSize);
    page->free = page->local_free = nullptr;
    __atomic_store_n(&page->capacity, 0u, __ATOMIC_RELAXED);
  }
  spin_lock(g_abandoned_lock);
  page_give_up(page);  // remote frees pushed meanwhile are collected by the page's next taker
  if (segment->abandoned) {
    abandoned_tidy(segment, page);
  } else {
    // Seq_cst, paired with adopt_segment: either its owner read here is the adopter (which
    // then reclaims), or the adopter's look at the flag after its walk sees it set.
    segment->returned_pages.store(1, std::memory_order_seq_cst);
    // Under the lock, a non-null owner has not run abandon_segments yet: its td is live.
    if (ThreadData* owner = segment_owner(segment)) {
      owner->pages_returned.store(true, std::memory_order_release);
    }
  }
  spin_unlock(g_abandoned_lock);
}

HS_HOT_TEXT bool claim_returned_page(Segment* segment, Page* page) {
  Heap* heap = tls_heap;
  // Not while this thread's heap is being torn down (takeover closed), nor into an abandoned
  // segment, whose ownerless pages the abandoned list tidies.
  if (heap == &g_empty_heap ||
      heap_shared(heap)->takeover_tid.load(std::memory_order_relaxed) == 0 ||
      __atomic_load_n(&segment->abandoned, __ATOMIC_RELAXED)) {
    return false;
  }
  // Under the lock: a segment is abandoned (its ownerless pages then belong to the list's
  // tidying) under it, so the test and the claim must not straddle an abandonment.
  spin_lock(g_abandoned_lock);
  bool claimed = !segment->abandoned && page_claim(page, heap->thread_id);
  spin_unlock(g_abandoned_lock);
  if (!claimed) return false;
  OwnerSlowPath slow_path(heap);
  adopt_claimed_page(heap->td, heap, page);  // the caller's block is live: it joins the heap
  if (segment_owner(segment) != heap->td) note_foreign_page(heap->td);
  return true;
}

HS_HOT_TEXT void reclaim_returned_pages(ThreadData* td) {
  if (!td->pages_returned.load(std::memory_order_relaxed) ||
      !td->pages_returned.exchange(false, std::memory_order_acquire)) {
    return;
  }
  for (Segment* segment = td->segments; segment != nullptr;) {
    Segment* next = segment->next;  // an emptied segment may be released below
    adopt_returned_pages(td, segment);
    segment = next;
  }
}

void reclaim_all_abandoned(ThreadData* td) {
  while (Segment* segment = pop_abandoned()) adopt_segment(td, segment);
  segments_unmap_if_empty(td);
}

namespace {

HS_HOT_TEXT void thread_done(void* value) {
  Heap* heap = static_cast<Heap*>(value);
  if (heap == nullptr || heap == &g_empty_heap) return;
  ThreadData* td = heap->td;
  {
    OwnerSlowPath slow_path(heap);  // ends before the heap's slot goes back to the pool
    // From here on no other thread takes this heap's full pages, or sweeps its emptied ones:
    // its lists are being torn down.
    takeover_open(heap, false);
    while (td->user_heaps != nullptr) {
      Heap* user = td->user_heaps;
      td->user_heaps = user->user_next;
      heap_delete_migrate(user);
      registry_remove(user);
      heap_struct_free(user);
    }
    heap_release_all(heap);  // collects every page: the remote frees are counted in its folds
    heap_return_taken(heap);
    heap_fold_counts(heap);  // what stays is abandoned: nothing left on its pages to fold
    purge_due(td, false);
    abandon_segments(td);
  }
  registry_remove(heap);
  g_counters.threads.fetch_sub(1, std::memory_order_relaxed);
  // Frees after this point (later destructors) take the remote path into abandoned pages;
  // a later malloc builds a fresh heap and re-arms the exit key.
  tls_heap = &g_empty_heap;
  heap_struct_free(heap);
}

}  // namespace

}  // namespace heapscope
