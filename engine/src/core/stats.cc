// Statistics: exact counters per heap (owner-written, see OwnerCounter), process-wide
// atomics for slow-path events, and a printer that formats into a stack buffer.
#include "core/stats.h"

#include <string.h>

#include "core/heap.h"
#include "core/huge.h"
#include "core/idle_owner.h"
#include "core/options.h"
#include "core/page_counts.h"
#include "core/page_queue.h"
#include "core/profiler_hooks.h"
#include "core/segment.h"
#include "core/spin_lock.h"
#include "core/takeover.h"
#include "core/thread.h"
#include "platform/platform.h"
#include "support/format.h"

namespace heapscope {

GlobalCounters g_counters;

HS_HOT_TEXT void heap_fold_counts(Heap* heap) {
  OwnerSlowPath slow_path(heap);
  heap_for_each_page(heap, [](Page* page) { page_fold_counts(page); });
}

namespace {

// The owner reading its own statistics: the remote frees waiting in its pages are collected
// first (as its next allocations would collect them), so they are counted too.
void heap_fold_counts_collected(Heap* heap) {
  OwnerSlowPath slow_path(heap);
  heap_collect_full(heap);  // full pages with remote frees go back to their queues
  heap_for_each_page(heap, [heap](Page* page) {
    if ((page_flags(page) & kPageInFull) == 0)
      heap->td->remote_frees_collected += page_collect(page);
    page_fold_counts(page);
  });
}

}  // namespace

// Reads the owner's plain fields the way OwnerCounter::get does (a relaxed load, uninstrumented).
HS_HOT_TEXT __attribute__((no_sanitize("thread"))) uint64_t heap_requested_bytes(const Heap* heap) {
  uint64_t requested = heap->counters.requested_bytes.get();
#if HS_PROFILER
  requested += countdown_requested_bytes(heap);
#endif
  return requested;
}

namespace {

struct Totals {
  uint64_t alloc_count, free_count, requested, allocated, freed;
};

// Reads a heap's owner-written counters, possibly another thread's (see OwnerCounter); the
// per-class counts become totals and bytes here.
HS_HOT_TEXT __attribute__((no_sanitize("thread"))) void add_heap(const Heap* heap, void* arg) {
  Totals* t = static_cast<Totals*>(arg);
  const HeapCounters& c = heap->counters;
  for (size_t bin = 1; bin < kBinCount; ++bin) {
    uint64_t allocs = c.bin_allocs[bin].get();
    uint64_t frees = c.bin_frees[bin].get();
    t->alloc_count += allocs;
    t->free_count += frees;
    t->allocated += allocs * bin_block_size(bin);
    t->freed += frees * bin_block_size(bin);
  }
  t->alloc_count += c.alloc_count.get();
  t->free_count += c.free_count.get();
  t->requested += heap_requested_bytes(heap);
  t->allocated += c.allocated_total.get();
  t->freed += c.freed_total.get();
}

}  // namespace

HS_HOT_TEXT BlockTotals heap_block_totals(const Heap* heap) {
  const HeapCounters& c = heap->counters;
  BlockTotals totals{c.alloc_count.get(), c.free_count.get()};
  for (size_t bin = 1; bin < kBinCount; ++bin) {
    totals.allocations += c.bin_allocs[bin].get();
    totals.frees += c.bin_frees[bin].get();
  }
  return totals;
}

HS_HOT_TEXT void counters_merge_dead(const Heap* heap) {
  Totals t{};
  add_heap(heap, &t);
  g_counters.dead_alloc_count.fetch_add(t.alloc_count, std::memory_order_relaxed);
  g_counters.dead_free_count.fetch_add(t.free_count, std::memory_order_relaxed);
  g_counters.dead_requested.fetch_add(t.requested, std::memory_order_relaxed);
  g_counters.dead_allocated.fetch_add(t.allocated, std::memory_order_relaxed);
  g_counters.dead_freed.fetch_add(t.freed, std::memory_order_relaxed);
}

HS_HOT_TEXT void note_committed(uint64_t added) {
  uint64_t now = g_counters.committed_bytes.fetch_add(added, std::memory_order_relaxed) + added;
  uint64_t peak = g_counters.committed_peak.load(std::memory_order_relaxed);
  while (now > peak &&
         !g_counters.committed_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

namespace {

// Copies the prefix of `full` that fits the caller's declared struct size.
int copy_out(hs_stats_t* out, const hs_stats_t& full) {
  if (out == nullptr || out->size < offsetof(hs_stats_t, alloc_count) || out->version == 0) {
    return -1;
  }
  size_t size = out->size < sizeof(hs_stats_t) ? out->size : sizeof(hs_stats_t);
  uint32_t version = out->version < HS_STATS_VERSION ? out->version : HS_STATS_VERSION;
  size_t header = offsetof(hs_stats_t, alloc_count);
  memcpy(reinterpret_cast<char*>(out) + header, reinterpret_cast<const char*>(&full) + header,
         size - header);
  out->version = version;
  return 0;
}

void fill_from_totals(hs_stats_t* s, const Totals& t) {
  s->alloc_count = t.alloc_count;
  s->free_count = t.free_count;
  s->requested_bytes = t.requested;
  s->allocated_bytes = t.allocated >= t.freed ? t.allocated - t.freed : 0;
}

struct LineWriter {
  char buffer[2048];
  size_t len = 0;
  void text(const char* s) {
    size_t n = strlen(s);
    if (len + n < sizeof buffer) {
      memcpy(buffer + len, s, n);
      len += n;
    }
  }
  void number(uint64_t value) {
    char digits[fmt::kMaxDecimalDigits];
    size_t count = fmt::decimal(value, digits);
    for (size_t i = 0; i < count && len + 1 < sizeof buffer; ++i) buffer[len++] = digits[i];
  }
  void row(const char* name, uint64_t value) {
    text("  ");
    text(name);
    for (size_t pad = strlen(name); pad < 20; ++pad) text(" ");
    number(value);
    text("\n");
  }
};

// The calling thread's heaps fold their pages, so its own counts are exact; other threads'
// lag by what their pages hold unfolded.
void fold_own_heaps(bool collect) {
  if (tls_heap == &g_empty_heap) return;
  if (collect) {
    // Pages given back into this thread's segments hold frees nobody has counted yet.
    OwnerSlowPath slow_path(tls_heap);
    reclaim_returned_pages(tls_heap->td);
  }
  auto fold = collect ? heap_fold_counts_collected : heap_fold_counts;
  fold(tls_heap);
  for (Heap* user = tls_heap->td->user_heaps; user != nullptr; user = user->user_next) fold(user);
}

}  // namespace

int stats_get(hs_stats_t* out, bool collect_own) {
  hs_stats_t full{};
  Totals totals{};
  fold_own_heaps(collect_own);
  // Dead counters and live heaps are read under the registry lock, which also covers the
  // merge of an exiting heap, so every count is seen exactly once.
  registry_visit([](const Heap* heap, void* arg) { add_heap(heap, arg); }, &totals);
  totals.alloc_count += g_counters.dead_alloc_count.load(std::memory_order_relaxed);
  totals.free_count += g_counters.dead_free_count.load(std::memory_order_relaxed);
  totals.requested += g_counters.dead_requested.load(std::memory_order_relaxed);
  totals.allocated += g_counters.dead_allocated.load(std::memory_order_relaxed);
  totals.freed += g_counters.dead_freed.load(std::memory_order_relaxed);
  fill_from_totals(&full, totals);
  full.committed_bytes = g_counters.committed_bytes.load(std::memory_order_relaxed);
  full.committed_peak = g_counters.committed_peak.load(std::memory_order_relaxed);
  full.reserved_bytes = g_counters.reserved_bytes.load(std::memory_order_relaxed);
  full.purged_bytes = g_counters.purged_bytes.load(std::memory_order_relaxed);
  full.pages = g_counters.pages.load(std::memory_order_relaxed);
  full.segments = g_counters.segments.load(std::memory_order_relaxed);
  full.heaps = g_counters.heaps.load(std::memory_order_relaxed);
  full.threads = g_counters.threads.load(std::memory_order_relaxed);
  full.huge_count = g_counters.huge_count.load(std::memory_order_relaxed);
  full.abandoned_segments = g_counters.abandoned_segments.load(std::memory_order_relaxed);
  full.huge_remaps = g_counters.huge_remaps.load(std::memory_order_relaxed);
  full.pages_taken_over = g_counters.pages_taken_over.load(std::memory_order_relaxed);
  full.pages_given_back = g_counters.pages_given_back.load(std::memory_order_relaxed);
  return copy_out(out, full);
}

}  // namespace heapscope

using namespace heapscope;

extern "C" {

int hs_stats_get(hs_stats_t* out) { return stats_get(out, true); }

int hs_heap_stats_get(const hs_heap_t* heap, hs_stats_t* out) {
  if (heap == nullptr) return -1;
  hs_stats_t full{};
  Totals totals{};
  Heap* counted = reinterpret_cast<Heap*>(const_cast<hs_heap_t*>(heap));
  if (counted->thread_id == os::thread_id()) heap_fold_counts_collected(counted);  // exact
  add_heap(reinterpret_cast<const Heap*>(heap), &totals);
  fill_from_totals(&full, totals);
  return copy_out(out, full);
}

void hs_stats_print(int fd) {
  hs_stats_t s{};
  s.size = sizeof s;
  s.version = HS_STATS_VERSION;
  hs_stats_get(&s);
  LineWriter w;
  w.text("heapscope stats (bytes)\n");
  w.row("alloc_count", s.alloc_count);
  w.row("free_count", s.free_count);
  w.row("requested_bytes", s.requested_bytes);
  w.row("allocated_bytes", s.allocated_bytes);
  w.row("committed_bytes", s.committed_bytes);
  w.row("committed_peak", s.committed_peak);
  w.row("reserved_bytes", s.reserved_bytes);
  w.row("purged_bytes", s.purged_bytes);
  w.row("pages", s.pages);
  w.row("segments", s.segments);
  w.row("heaps", s.heaps);
  w.row("threads", s.threads);
  w.row("huge_count", s.huge_count);
  w.row("abandoned_segments", s.abandoned_segments);
  w.row("huge_remaps", s.huge_remaps);
  w.row("pages_taken_over", s.pages_taken_over);
  w.row("pages_given_back", s.pages_given_back);
  w.row("resident_bytes", os::resident_bytes());
  os::write_all(fd, w.buffer, w.len);
}

}  // extern "C"

// A private duplicate of stderr: programs such as coreutils close fd 2 in their own exit
// handlers, before our destructor runs.
static int g_stats_fd = -1;

// Runs when the library unloads or the process exits normally.
HS_HOT_TEXT __attribute__((destructor)) static void heapscope_at_exit() {
  if (option(hs_option_show_stats) != 0) hs_stats_print(g_stats_fd >= 0 ? g_stats_fd : 2);
}

// Reads the options early, before main, even if nothing allocated yet.
HS_HOT_TEXT __attribute__((constructor)) static void heapscope_at_load() {
  process_init();
  if (option(hs_option_show_stats) != 0) g_stats_fd = os::duplicate_fd(2);
}
