// Giving back the pages that emptied while their owner was idle.
//
// Blocks other threads free wait in their page's remote list until its owner collects
// them, on its slow paths. A thread that made a data structure for others and then waits
// (mimalloc-bench's larson: the main thread makes every worker's first blocks, starts the
// workers and sleeps through the run) never does: its pages empty one remote free at a time
// and stay resident, while the freeing threads fault in pages of their own for the same
// sizes. Full pages are taken over (takeover.cc); the pages in the owner's queues cannot
// move, but a page none of whose blocks is live can be emptied where it is, because then
// nothing but the owner's slow paths may touch it:
//
// * no thread frees into it, the owner included, since none of its blocks is live;
// * the owner's allocations pop only from the pages its direct tables point at (larger
//   sizes from their queue's first page, which is never swept), and the page is not one;
// * the owner's slow paths run under OwnerSlowPath's lock, which the sweeping thread holds.
//
// So a thread freeing into an owner that has run no slow path for kOwnerIdleMs takes that
// lock (never waiting for it) and, for every such page of the owner's, drops its free lists,
// marks it uncarved and gives its memory back to the OS. The page stays in its queue, empty:
// the owner carves it again when it next allocates that size (or frees it with its heap).
// A thread that starts another points its direct tables at the empty page
// (divert_own_direct_tables): its first pages of each size are then sweepable too until it
// allocates that size again, which costs it one generic path per size.
//
// Deciding that no block is live reads `used` (the live blocks plus the remote frees not
// yet collected), which the owner's fast-path free lowers without the lock, and then counts
// the remote list, which only grows while the lock is held. If `used` read as the bias plus
// n and the list then held n blocks, every block live when `used` was read had been freed
// remotely by the time the list was read: the owner held none of them, and was not in the
// middle of freeing one either (that block would have been counted live and not freed
// remotely). The owner's last free into the page stores `used` with release, after it
// pushed onto the page's free list (free_to_own_page), and the sweep loads it with acquire,
// so the lists it drops include that push.
#include "core/idle_owner.h"

#include "core/hardening.h"
#include "core/page_counts.h"
#include "core/page_queue.h"
#include "core/segment.h"
#include "core/spin_lock.h"
#include "core/stats.h"
#include "core/thread.h"
#include "platform/platform.h"
#include "platform/thread_local.h"

namespace heapscope {

namespace {

// How long an owner must have run no slow path before other threads give back its emptied
// pages (far beyond the gap between two slow paths of a thread that is allocating), and how
// often they look again while it stays idle.
constexpr int64_t kOwnerIdleMs = 10;
constexpr int64_t kSweepEveryMs = 10;
// A freeing thread looks at the clock once per this many of its frees into other threads.
constexpr uint32_t kFreesPerIdleLook = 64;
// The last owner a thread freed into that had gone quiet is looked at again once per this many
// of the thread's own allocation slow paths (its last pages empty with the last frees into
// it, after which nobody frees into it), until it is active again or the thread has swept
// all of its queues kSweepsAfterNotice times.
constexpr uint32_t kSlowPathsPerIdleLook = 8;
constexpr uint32_t kSweepsAfterNotice = 16;
// The work one sweep may do, in pages looked at plus remote-list blocks counted; checked
// between pages, as a page's count always finishes (at most its block count: 4,096 at 16
// bytes). The next sweep resumes where this one stopped, so pages behind others that stay
// partly live are reached too, and a thread freeing into an owner whose queues hold many
// pages with long remote lists pays a bounded walk per sweep, not one over all of them.
// (Passing the pages of the resumed queue already looked at is not counted: a pointer each.)
// Enough for one pass over larson's main thread (about 100 pages and 10,000 blocks) in one
// sweep: its workers free into it only in their first generation, some 50 ms, and with 4,096
// or 8,192 steps the passes they made in that time gave back 18-75 of its 100 pages in some
// runs, all 100 in every run with this many.
constexpr uint32_t kSweepSteps = 16384;

HS_THREAD_LOCAL(uint32_t, t_frees_into_others, 0);
HS_THREAD_LOCAL(Heap*, t_idle_owner, nullptr);
HS_THREAD_LOCAL(uint32_t, t_idle_sweeps_left, 0);
HS_THREAD_LOCAL(uint32_t, t_slow_paths_since_look, 0);

// No block of the page is live (see above); the caller holds the owner's lock. Adds the
// remote-list blocks it counted to *steps.
bool page_wholly_free(const Page* page, uint32_t* steps) {
  const uint32_t used = __atomic_load_n(&page->used, __ATOMIC_ACQUIRE);
  const uint32_t live = used - page->keep_bias;
  if (used < page->keep_bias || live == 0) return false;
  uint32_t remote = 0;
  for (const Block* block = page->thread_free.load(std::memory_order_acquire); block != nullptr;
       block = block_next(block)) {
    if (++remote > live) break;
  }
  *steps += remote;
  return remote == live;
}

// Empties a page none of whose blocks is live: no lists, nothing carved, nothing resident.
void page_give_back(Page* page) {
  page->thread_free.store(nullptr, std::memory_order_relaxed);
  page->free = nullptr;
  page->local_free = nullptr;
  // The remote frees are counted by the owner's next fold, as what `used` fell by.
  page->used = page->keep_bias;
  page->passed_dry = 0;
  purge_page_whole(page);  // before capacity falls: it purges what was carved
  __atomic_store_n(&page->capacity, 0u, __ATOMIC_RELAXED);
  g_counters.pages_given_back.fetch_add(1, std::memory_order_relaxed);
}

// A direct slot of the bin points at the page: the owner's allocations may pop from it.
bool direct_slots_hold(Heap* heap, size_t bin, const Page* page) {
  const auto [table, low, high] = direct_slots_of(heap, bin);
  for (size_t slot = low; slot <= high; ++slot) {
    if (__atomic_load_n(&table[slot], __ATOMIC_RELAXED) == page) return true;
  }
  return false;
}

enum class Idle {
  kActive,       // it ran a slow path since the last look (or this is the first)
  kQuiet,        // none since, but not for kOwnerIdleMs yet
  kSweptLately,  // idle, and swept in the last kSweepEveryMs
  kSweptPart,    // idle: swept now, up to kSweepSteps, the pass not finished
  kSweptNow,     // idle: swept now, to the end of the pass
};

HS_HOT_TEXT Idle sweep_owner(Heap* owner) {
  HeapShared* shared = heap_shared(owner);
  // The owner is in a slow path (or another thread sweeps it): look again later.
  if (!spin_try_lock(shared->owner_lock)) return Idle::kSweptLately;
  // The heap pointer may be stale (its thread ended, the slot went to another thread): the
  // lock and the id under it say whose heap this is now, and that it is still live.
  const uintptr_t tid = shared->takeover_tid.load(std::memory_order_relaxed);
  uint32_t steps = 0;
  uint32_t skip = shared->sweep_skip;
  for (size_t bin = shared->sweep_bin;
       tid != 0 && bin < kBinCount && bin_block_size(bin) <= kMediumBlockMax; ++bin, skip = 0) {
    Page* first = owner->queues[bin].first;
    if (first == nullptr) continue;
    uint32_t index = 0;
    for (Page* page = direct_slots_hold(owner, bin, first) ? first->next : first; page != nullptr;
         page = page->next, ++index) {
      if (index < skip) continue;
      if (steps >= kSweepSteps) {
        shared->sweep_bin = static_cast<uint32_t>(bin);
        shared->sweep_skip = index;
        spin_unlock(shared->owner_lock);
        return Idle::kSweptPart;
      }
      ++steps;
      // Exactly "the owner's, no flag": not full, checked, sampled or one-block. Pages taken
      // over from other threads' segments are left to the owner's purge rounds.
      if (page->owner_word.load(std::memory_order_acquire) != tid ||
          segment_owner(segment_of_page(page)) != owner->td) {
        continue;
      }
      if (page_wholly_free(page, &steps)) page_give_back(page);
    }
  }
  shared->sweep_bin = 1;
  shared->sweep_skip = 0;
  spin_unlock(shared->owner_lock);
  return Idle::kSweptNow;
}

// Sweeps the owner if it has run no slow path for kOwnerIdleMs and nobody swept it in the
// last kSweepEveryMs.
HS_HOT_TEXT Idle sweep_if_idle(Heap* owner) {
  HeapShared* shared = heap_shared(owner);
  if (shared->takeover_tid.load(std::memory_order_relaxed) == 0) return Idle::kActive;
  const int64_t now = os::now_ms();
  const uint64_t paths = shared->slow_paths.load(std::memory_order_relaxed);
  if (paths != shared->idle_seen_paths.load(std::memory_order_relaxed)) {
    shared->idle_seen_paths.store(paths, std::memory_order_relaxed);
    shared->idle_seen_ms.store(now, std::memory_order_relaxed);
    return Idle::kActive;
  }
  if (now - shared->idle_seen_ms.load(std::memory_order_relaxed) < kOwnerIdleMs) {
    return Idle::kQuiet;
  }
  if (now - shared->idle_swept_ms.load(std::memory_order_relaxed) < kSweepEveryMs) {
    return Idle::kSweptLately;
  }
  shared->idle_swept_ms.store(now, std::memory_order_relaxed);
  return sweep_owner(owner);
}

}  // namespace

HS_HOT_TEXT Heap* owner_slow_path_enter(Heap* heap) {
  Heap* locked = heap->td != nullptr ? heap->td->default_heap : nullptr;
  if (locked == nullptr || locked->owner_depth++ != 0) return locked;
  HeapShared* shared = heap_shared(locked);
  spin_lock(shared->owner_lock);
  shared->slow_paths.store(shared->slow_paths.load(std::memory_order_relaxed) + 1,
                           std::memory_order_relaxed);
  return locked;
}

HS_HOT_TEXT void owner_slow_path_exit(Heap* locked) {
  if (locked != nullptr && --locked->owner_depth == 0) {
    spin_unlock(heap_shared(locked)->owner_lock);
  }
}

bool owner_slow_path_held(const Heap* heap) {
  return heap->td == nullptr || heap->td->default_heap->owner_depth != 0;
}

HS_HOT_TEXT void note_free_into_idle(Heap* owner) {
  if (HS_HARDENED || ++t_frees_into_others % kFreesPerIdleLook != 0) return;
  // An owner that may be going idle is remembered, to be looked at from this thread's slow
  // paths after its last frees into it.
  if (sweep_if_idle(owner) != Idle::kActive && t_idle_owner != owner) {
    t_idle_owner = owner;
    t_idle_sweeps_left = kSweepsAfterNotice;
  }
}

HS_HOT_TEXT void sweep_idle_owner_due() {
  Heap* owner = t_idle_owner;
  if (owner == nullptr || ++t_slow_paths_since_look % kSlowPathsPerIdleLook != 0) return;
  const Idle idle = sweep_if_idle(owner);
  if (idle == Idle::kActive || (idle == Idle::kSweptNow && --t_idle_sweeps_left == 0)) {
    t_idle_owner = nullptr;
  }
}

void purge_for_idle_owner(Heap* owner, int64_t now, int64_t grace_ms) {
  HeapShared* shared = heap_shared(owner);
  if (!spin_try_lock(shared->owner_lock)) return;  // in a slow path: it purges for itself
  // Under the lock the id says whether this slot is a live thread's default heap (0 for a
  // first-class heap, or while a thread is set up or torn down).
  if (shared->takeover_tid.load(std::memory_order_relaxed) != 0 && owner->td != nullptr) {
    segments_purge_overdue(owner->td, now, grace_ms);
  }
  spin_unlock(shared->owner_lock);
}

HS_HOT_TEXT void divert_own_direct_tables() {
  Heap* heap = tls_heap;
  if (HS_HARDENED || heap == &g_empty_heap) return;
  OwnerSlowPath slow_path(heap);
  for (Page*& slot : heap->direct.slots) __atomic_store_n(&slot, &g_empty_page, __ATOMIC_RELAXED);
  for (Page*& slot : heap->direct.medium) __atomic_store_n(&slot, &g_empty_page, __ATOMIC_RELAXED);
}

}  // namespace heapscope
