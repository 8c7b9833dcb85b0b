// The background purger. Without it, free memory goes back to the OS only from the
// allocator's own calls (each thread's purge rounds, on its slow paths): a program that frees
// what it used and then waits keeps it resident until it allocates again. This thread wakes
// every half purge_delay_max (at least 10 ms) and does what those calls would have done:
//
// * expires the huge cache (process-wide, under its lock);
// * purges exited threads' segments whose deadline passed (under the abandoned-list lock);
// * for each live thread whose segments' deadlines passed more than a wake-up ago (it ran no
//   purge round since: it is idle), purges them for it, holding that thread's slow-path lock
//   (taken only if free, never waited for): the owner touches its segments' free slices and
//   its pages' uncarved memory only on slow paths, which run under that lock.
//
// What it leaves to the owners: their kept empty pages (one per class; freeing them folds
// counters the owner's fast path writes) and their pages' free blocks. Not started with the
// process: one more thread in /proc is visible to a program, and one that must stay
// single-threaded (unshare(CLONE_NEWUSER), some sandboxes) cannot have it. By default it starts
// when the allocator first has memory whose hold needs its timer (the segments of exited pool
// threads, thread.cc), a program that already runs and ends threads; option 0 keeps it off.
#include "core/purge_thread.h"

#include "core/huge.h"
#include "core/idle_owner.h"
#include "core/options.h"
#include "core/thread.h"
#include "platform/platform.h"

namespace heapscope {

std::atomic<int> g_purge_thread_wanted{0};
std::atomic<bool> g_purge_thread_on{false};

namespace {

// Off (or never wanted), being started, running.
enum PurgeThreadState : int { kNotRunning, kStarting, kRunning };
std::atomic<int> g_state{kNotRunning};
// A start failed (no such thread on this platform, or the OS refused one): holds do not ask
// again, or every hold would cost a failing thread creation.
std::atomic<bool> g_start_failed{false};

// Live heaps are looked at this many at a time: the registry lock is not held while purging.
constexpr size_t kHeapsPerPass = 64;

int64_t wake_interval_ms() {
  const long ceiling = option(hs_option_purge_delay_max);
  return ceiling / 2 > 10 ? ceiling / 2 : 10;
}

void purge_pass(int64_t grace_ms) {
  huge_cache_trim(false);
  const int64_t now = os::now_ms();
  abandoned_purge_due(now);
  Heap* heaps[kHeapsPerPass];
  for (size_t skip = 0;; skip += kHeapsPerPass) {
    const size_t count = registry_snapshot(heaps, kHeapsPerPass, skip);
    for (size_t i = 0; i < count; ++i) purge_for_idle_owner(heaps[i], now, grace_ms);
    if (count < kHeapsPerPass) break;
  }
}

void purge_thread_body() {
  for (;;) {
    const int64_t interval = wake_interval_ms();
    os::sleep_ms(interval);
    // Turned off again: it sleeps on (a thread cannot be taken back from a running program
    // safely), doing nothing.
    const bool on = option(hs_option_purge_thread) != 0;
    g_purge_thread_on.store(on, std::memory_order_relaxed);
    if (!on) continue;
    purge_pass(interval);
  }
}

}  // namespace

HS_HOT_TEXT bool purge_thread_starts_on_demand() { return option(hs_option_purge_thread) < 0; }

void purge_thread_request() {
  if (g_state.load(std::memory_order_acquire) == kNotRunning &&
      !g_start_failed.load(std::memory_order_relaxed)) {
    g_purge_thread_wanted.store(1, std::memory_order_relaxed);
  }
}

void purge_thread_start() {
  int expected = kNotRunning;
  if (!g_state.compare_exchange_strong(expected, kStarting, std::memory_order_acq_rel)) {
    g_purge_thread_wanted.store(0, std::memory_order_relaxed);
    return;
  }
  g_purge_thread_wanted.store(0, std::memory_order_relaxed);
  // The thread's set-up allocates through this allocator: the state says "starting", so those
  // calls do not come back here.
  const bool started = os::start_background_thread(purge_thread_body, "hs-purge");
  if (!started) g_start_failed.store(true, std::memory_order_relaxed);
  g_state.store(started ? kRunning : kNotRunning, std::memory_order_release);
  g_purge_thread_on.store(started, std::memory_order_relaxed);
}

void purge_thread_fork_child() {
  if (g_state.load(std::memory_order_relaxed) == kNotRunning) return;
  g_state.store(kNotRunning, std::memory_order_relaxed);
  g_purge_thread_on.store(false, std::memory_order_relaxed);
  if (option(hs_option_purge_thread) > 0) g_purge_thread_wanted.store(1, std::memory_order_relaxed);
}

}  // namespace heapscope
