// The memory-events rules, one test per row, against the library this binary links: with the
// events compiled in every row checks its event and counters, compiled out every row checks
// that nothing is recorded and the API reports the subsystem off.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "event_recorder.h"

namespace hs_events_test {
namespace {

// In the off build nothing may be recorded and the snapshot must fail.
void expect_off(const Recorder& recorder) {
  bool ok = true;
  take_snapshot(&ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(recorder.count, 0);
}

int64_t usable(const void* p) { return static_cast<int64_t>(hs_usable_size(p)); }

TEST(MemoryEventsApi, AvailabilityMatchesTheBuild) {
  EXPECT_EQ(hs_memory_events_available(), kEventsOn);
  hs_memory_events_set_enabled(false);
  EXPECT_FALSE(hs_memory_events_enabled());
  EXPECT_FALSE(hs_memory_events_set_enabled(true));  // previous state: off
  EXPECT_EQ(hs_memory_events_enabled(), kEventsOn);
  EXPECT_EQ(hs_memory_events_set_enabled(false), kEventsOn);  // previous state: on (if built)
  EXPECT_FALSE(hs_memory_events_enabled());
}

TEST(MemoryEventsApi, SnapshotChecksSizeAndVersion) {
  bool ok = false;
  take_snapshot(&ok);
  EXPECT_EQ(ok, kEventsOn);
  hs_memory_snapshot_t s{};
  s.size = sizeof s - 8;
  s.version = HS_MEMORY_SNAPSHOT_VERSION;
  EXPECT_FALSE(hs_memory_events_snapshot(&s));
  s.size = sizeof s;
  s.version = HS_MEMORY_SNAPSHOT_VERSION + 1;
  EXPECT_FALSE(hs_memory_events_snapshot(&s));
  EXPECT_FALSE(hs_memory_events_snapshot(nullptr));
}

TEST(MemoryEventsApi, CallbackKindIsChecked) {
  EXPECT_EQ(hs_memory_events_set_callback(HS_MEMORY_FREE, record, nullptr), kEventsOn);
  EXPECT_EQ(hs_memory_events_set_callback(HS_MEMORY_FREE, nullptr, nullptr), kEventsOn);
  EXPECT_FALSE(hs_memory_events_set_callback(HS_MEMORY_CHANGE_KINDS, record, nullptr));
}

TEST(MemoryEventsRows, AllocationCountsBeforeItsCallback) {
  Recorder r;
  Session session(&r);
  void* p = hs_malloc(100);
  ASSERT_NE(p, nullptr);
  if (!kEventsOn) {
    expect_off(r);
    hs_free(p);
    return;
  }
  ASSERT_EQ(r.count, 1);
  const hs_memory_change_t& c = r.events[0].change;
  EXPECT_EQ(c.kind, HS_MEMORY_ALLOCATE);
  EXPECT_EQ(c.address, p);
  EXPECT_EQ(c.delta_bytes, usable(p));
  EXPECT_EQ(c.request_size, 100u);
  EXPECT_EQ(c.total_bytes, static_cast<uint64_t>(usable(p)));
  EXPECT_EQ(r.events[0].live_seen, c.total_bytes);  // counters first, then the callback
  hs_memory_snapshot_t s = take_snapshot();
  EXPECT_EQ(s.live_count, 1u);
  EXPECT_EQ(s.accum_count, 1u);
  EXPECT_EQ(s.accum_bytes, static_cast<uint64_t>(usable(p)));
  hs_free(p);
}

TEST(MemoryEventsRows, FreeOfATrackedBlock) {
  Recorder r;
  Session session(&r);
  void* p = hs_malloc(300);
  int64_t size = usable(p);
  hs_free(p);
  if (!kEventsOn) return expect_off(r);
  ASSERT_EQ(r.count, 2);
  const hs_memory_change_t& c = r.events[1].change;
  EXPECT_EQ(c.kind, HS_MEMORY_FREE);
  EXPECT_EQ(c.address, p);
  EXPECT_EQ(c.delta_bytes, -size);
  EXPECT_EQ(c.request_size, 0u);
  EXPECT_EQ(c.total_bytes, 0u);
  EXPECT_EQ(r.events[1].live_seen, 0u);
  hs_memory_snapshot_t s = take_snapshot();
  EXPECT_EQ(s.live_count, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.accum_bytes, static_cast<uint64_t>(size));
}

TEST(MemoryEventsRows, EveryAllocationFunctionIsOneEvent) {
  Recorder r;
  Session session(&r);
  void* blocks[9];
  blocks[0] = hs_calloc(3, 40);
  blocks[1] = hs_zalloc(70);
  blocks[2] = hs_malloc_aligned(100, 64);
  blocks[3] = hs_malloc_aligned(100, 4096);
  blocks[4] = hs_zalloc_aligned(5000, 256);
  blocks[5] = hs_realloc(nullptr, 33);  // realloc(NULL, n) allocates
  ASSERT_EQ(hs_posix_memalign(&blocks[6], 128, 900), 0);
  blocks[7] = hs_calloc(1, 3 << 20);  // huge, zeroed by the kernel
  blocks[8] = hs_malloc(70000);       // large
  int64_t live = 0;
  for (void* p : blocks) {
    ASSERT_NE(p, nullptr);
    live += usable(p);
  }
  if (kEventsOn) {
    ASSERT_EQ(r.count, 9);
    for (int i = 0; i < 9; i++) {
      EXPECT_EQ(r.events[i].change.kind, HS_MEMORY_ALLOCATE);
      EXPECT_EQ(r.events[i].change.address, blocks[i]);
    }
    EXPECT_EQ(r.events[0].change.request_size, 120u);
    EXPECT_EQ(take_snapshot().live_bytes, static_cast<uint64_t>(live));
  } else {
    expect_off(r);
  }
  for (void* p : blocks) hs_free(p);
  if (kEventsOn) {
    EXPECT_EQ(r.count, 18);
    EXPECT_EQ(take_snapshot().live_bytes, 0u);
  }
}

TEST(MemoryEventsRows, InPlaceResizeHasDeltaZero) {
  Recorder r;
  Session session(&r);
  void* p = hs_malloc(100);
  void* q = hs_realloc(p, 90);
  ASSERT_EQ(q, p);
  void* e = hs_expand(p, 80);
  ASSERT_EQ(e, p);
  if (!kEventsOn) {
    expect_off(r);
    hs_free(p);
    return;
  }
  ASSERT_EQ(r.count, 3);
  for (int i = 1; i < 3; i++) {
    EXPECT_EQ(r.events[i].change.kind, HS_MEMORY_RESIZE);
    EXPECT_EQ(r.events[i].change.delta_bytes, 0);
    EXPECT_EQ(r.events[i].change.total_bytes, static_cast<uint64_t>(usable(p)));
  }
  EXPECT_EQ(r.events[1].change.request_size, 90u);
  EXPECT_EQ(r.events[2].change.request_size, 80u);
  EXPECT_EQ(take_snapshot().accum_count, 1u);
  hs_free(p);
}

TEST(MemoryEventsRows, MovingReallocIsExactlyOneResize) {
  Recorder r;
  Session session(&r);
  char* p = static_cast<char*>(hs_malloc(16));
  std::memset(p, 7, 16);
  int64_t before = usable(p);
  char* q = static_cast<char*>(hs_realloc(p, 4000));
  ASSERT_NE(q, nullptr);
  ASSERT_NE(q, p);
  EXPECT_EQ(q[15], 7);
  if (!kEventsOn) {
    expect_off(r);
    hs_free(q);
    return;
  }
  ASSERT_EQ(r.count, 2);  // the allocation, then one resize: no internal alloc or free
  const hs_memory_change_t& c = r.events[1].change;
  EXPECT_EQ(c.kind, HS_MEMORY_RESIZE);
  EXPECT_EQ(c.address, q);
  EXPECT_EQ(c.delta_bytes, usable(q) - before);
  EXPECT_EQ(c.request_size, 4000u);
  EXPECT_EQ(c.total_bytes, static_cast<uint64_t>(usable(q)));
  hs_memory_snapshot_t s = take_snapshot();
  EXPECT_EQ(s.accum_count, 1u);
  EXPECT_EQ(s.live_count, 1u);
  int64_t grown = usable(q);
  EXPECT_EQ(s.accum_bytes, static_cast<uint64_t>(grown));  // the growth accumulates
  // Shrinking by moving: live falls, the accumulated bytes stay.
  void* small = hs_realloc(q, 8);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(small, static_cast<void*>(q));
  ASSERT_EQ(r.count, 3);
  EXPECT_EQ(r.events[2].change.kind, HS_MEMORY_RESIZE);
  EXPECT_EQ(r.events[2].change.delta_bytes, usable(small) - grown);
  s = take_snapshot();
  EXPECT_EQ(s.live_bytes, static_cast<uint64_t>(usable(small)));
  EXPECT_EQ(s.accum_bytes, static_cast<uint64_t>(grown));
  hs_free(small);
  EXPECT_EQ(take_snapshot().live_bytes, 0u);
}

TEST(MemoryEventsRows, ReallocToZeroIsAFree) {
  Recorder r;
  Session session(&r);
  void* p = hs_malloc(50);
  EXPECT_EQ(hs_realloc(p, 0), nullptr);
  if (!kEventsOn) return expect_off(r);
  ASSERT_EQ(r.count, 2);
  EXPECT_EQ(r.events[1].change.kind, HS_MEMORY_FREE);
  EXPECT_EQ(take_snapshot().live_count, 0u);
}

TEST(MemoryEventsRows, FailedAllocationsProduceNothing) {
  Recorder r;
  Session session(&r);
  EXPECT_EQ(hs_malloc(SIZE_MAX / 2), nullptr);
  EXPECT_EQ(hs_calloc(SIZE_MAX / 4, 8), nullptr);
  EXPECT_EQ(hs_malloc_aligned(64, 3), nullptr);
  void* p = hs_malloc(64);
  EXPECT_EQ(hs_realloc(p, SIZE_MAX / 2), nullptr);  // p stays valid and tracked
  EXPECT_EQ(hs_expand(p, 1 << 20), nullptr);
  if (kEventsOn) {
    ASSERT_EQ(r.count, 1);
    EXPECT_EQ(take_snapshot().live_count, 1u);
  } else {
    expect_off(r);
  }
  hs_free(p);
  if (kEventsOn) {
    ASSERT_EQ(r.count, 2);
    EXPECT_EQ(r.events[1].change.kind, HS_MEMORY_FREE);
    EXPECT_EQ(take_snapshot().live_bytes, 0u);
  }
}

TEST(MemoryEventsRows, ForeignPointerFreeProducesNothing) {
  Recorder r;
  Session session(&r);
  int on_stack = 0;
  // Not ours: ignored when frees are not checked (the Release default; Debug checks them).
  const long checking = hs_option_get(hs_option_check_frees);
  hs_option_set(hs_option_check_frees, 0);
  hs_free(&on_stack);
  hs_option_set(hs_option_check_frees, checking);
  hs_free(nullptr);
  EXPECT_EQ(r.count, 0);
}

// A detected double free produces no event: the second free is not a tracked block, so it
// reaches the allocator's check (which aborts) with nothing dispatched in between.
void print_free(const hs_memory_change_t* change, void*) {
  // Flushed: the engine's report is written to the descriptor directly, and MinGW's C runtime
  // buffers stderr when it is not a console, which would put this line after the report.
  if (change->kind == HS_MEMORY_FREE) {
    fputs("FREE-EVENT\n", stderr);
    fflush(stderr);
  }
}
TEST(MemoryEventsRowsDeathTest, DetectedDoubleFreeProducesNothing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        hs_option_set(hs_option_check_frees, 1);
        hs_memory_events_set_enabled(true);
        hs_memory_events_set_callback(HS_MEMORY_FREE, print_free, nullptr);
        void* keep = hs_malloc(24);  // the page stays in use, so the block sits on its list
        void* p = hs_malloc(24);
        hs_free(p);
        hs_free(p);
        hs_free(keep);
      },
      kEventsOn ? "^FREE-EVENT\nheapscope: double free" : "^heapscope: double free");
}

TEST(MemoryEventsRows, CallbacksMayAllocateUncounted) {
  struct Nested {
    int calls = 0;
  } nested;
  auto allocating = [](const hs_memory_change_t*, void* arg) {
    static_cast<Nested*>(arg)->calls++;
    void* a = hs_malloc(64);
    void* b = hs_realloc(a, 5000);
    hs_free(b);
    void* kept = hs_malloc(32);  // outlives the callback: freed later, outside it
    static void* keep_slot;
    if (keep_slot == nullptr)
      keep_slot = kept;
    else
      hs_free(kept);
  };
  hs_memory_events_set_enabled(false);
  hs_memory_events_set_callback(HS_MEMORY_ALLOCATE, allocating, &nested);
  hs_memory_events_set_enabled(true);
  void* p = hs_malloc(100);
  hs_memory_snapshot_t s = take_snapshot();
  hs_memory_events_set_callback(HS_MEMORY_ALLOCATE, nullptr, nullptr);
  hs_memory_events_set_enabled(false);
  hs_free(p);
  if (!kEventsOn) {
    EXPECT_EQ(nested.calls, 0);
    return;
  }
  EXPECT_EQ(nested.calls, 1);
  EXPECT_EQ(s.accum_count, 1u);
  EXPECT_EQ(s.live_count, 1u);
  EXPECT_EQ(s.live_bytes, static_cast<uint64_t>(usable(p)));
}

TEST(MemoryEventsRows, BlocksFromBeforeTrackingNeverWrap) {
  hs_memory_events_set_enabled(false);
  void* before = hs_malloc(1000);
  void* moved_before = hs_malloc(40);
  Recorder r;
  Session session(&r);
  hs_free(before);  // allocated while off, freed while on: nothing
  if (!kEventsOn) return expect_off(r);
  EXPECT_EQ(r.count, 0);
  hs_memory_snapshot_t s = take_snapshot();
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.live_count, 0u);
  // A realloc of an unknown block is an allocation of the result.
  void* q = hs_realloc(moved_before, 3000);
  ASSERT_EQ(r.count, 1);
  EXPECT_EQ(r.events[0].change.kind, HS_MEMORY_ALLOCATE);
  EXPECT_EQ(take_snapshot().live_bytes, static_cast<uint64_t>(usable(q)));
  // Across a disable/enable: the block of the earlier period is forgotten.
  hs_memory_events_set_enabled(false);
  hs_memory_events_set_enabled(true);
  EXPECT_EQ(take_snapshot().live_bytes, 0u);
  hs_free(q);
  EXPECT_EQ(r.count, 1);
  s = take_snapshot();
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.live_count, 0u);
}

TEST(MemoryEventsRows, RemoteFreesAndFreesAfterTheOwnerExited) {
  Recorder r;
  Session session(&r);
  void* from_thread = nullptr;
  void* freed_there = hs_malloc(200);
  std::thread t([&] {
    from_thread = hs_malloc(500);
    hs_free(freed_there);  // remote free of a main-thread block
  });
  t.join();
  int64_t size = usable(from_thread);
  hs_free(from_thread);  // the owner has exited
  if (!kEventsOn) return expect_off(r);
  ASSERT_EQ(r.count, 4);
  EXPECT_EQ(r.events[2].change.kind, HS_MEMORY_FREE);
  EXPECT_EQ(r.events[3].change.kind, HS_MEMORY_FREE);
  EXPECT_EQ(r.events[3].change.delta_bytes, -size);
  hs_memory_snapshot_t s = take_snapshot();
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.live_count, 0u);
}

TEST(MemoryEventsRows, HeapDestroyFreesItsTrackedBlocks) {
  Recorder r;
  Session session(&r);
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  void* other = hs_malloc(64);
  for (size_t size : {16u, 700u, 100000u, 5u << 20}) ASSERT_NE(hs_heap_malloc(heap, size), nullptr);
  hs_heap_destroy(heap);
  if (!kEventsOn) {
    hs_free(other);
    return expect_off(r);
  }
  ASSERT_EQ(r.count, 5 + 4);
  for (int i = 5; i < 9; i++) EXPECT_EQ(r.events[i].change.kind, HS_MEMORY_FREE);
  hs_memory_snapshot_t s = take_snapshot();
  EXPECT_EQ(s.live_count, 1u);
  EXPECT_EQ(s.live_bytes, static_cast<uint64_t>(usable(other)));
  hs_free(other);
  EXPECT_EQ(take_snapshot().live_bytes, 0u);
}

TEST(MemoryEventsRows, PeakShortLivedAndHistogram) {
  Recorder r;
  Session session(&r);
  hs_memory_snapshot_t start = take_snapshot();
  void* big = hs_malloc(100000);
  int64_t peak = usable(big);
  hs_free(big);  // no allocation in between: short-lived
  void* a = hs_malloc(10);
  void* b = hs_malloc(20);
  hs_free(a);  // b was allocated after it: not short-lived
  hs_free(b);  // still the latest allocation: short-lived
  hs_memory_snapshot_t s = take_snapshot();
  if (!kEventsOn) return expect_off(r);
  EXPECT_GE(s.peak_live_bytes, static_cast<uint64_t>(peak));
  EXPECT_EQ(s.short_lived_count - start.short_lived_count, 2u);
  EXPECT_EQ(s.size_histogram[17] - start.size_histogram[17], 1u);  // 100000 has 17 bits
  EXPECT_EQ(s.size_histogram[4] - start.size_histogram[4], 1u);    // 10
  EXPECT_EQ(s.size_histogram[5] - start.size_histogram[5], 1u);    // 20
}

TEST(MemoryEventsRows, ReplacedAndClearedCallbacksAreNotCalled) {
  Recorder first, second;
  hs_memory_events_set_enabled(true);
  hs_memory_events_set_callback(HS_MEMORY_ALLOCATE, record, &first);
  hs_free(hs_malloc(8));
  hs_memory_events_set_callback(HS_MEMORY_ALLOCATE, record, &second);
  hs_free(hs_malloc(8));
  hs_memory_events_set_callback(HS_MEMORY_ALLOCATE, nullptr, nullptr);
  hs_free(hs_malloc(8));
  hs_memory_events_set_enabled(false);
  EXPECT_EQ(first.count, kEventsOn ? 1 : 0);
  EXPECT_EQ(second.count, kEventsOn ? 1 : 0);
}

TEST(MemoryEventsVisit, SeesEveryThreadsTrackedBlocks) {
  Recorder r;
  Session session(&r);
  void* mine = hs_malloc(48);
  void* theirs = nullptr;
  std::thread t([&] { theirs = hs_malloc(4096); });
  t.join();
  struct Seen {
    void* want[2];
    size_t sizes[2];
    int found[2];
    int total;
  } seen{{mine, theirs}, {0, 0}, {0, 0}, 0};
  bool ok = hs_memory_events_visit(
      [](void* p, size_t size, void* arg) {
        Seen* s = static_cast<Seen*>(arg);
        s->total++;
        for (int i = 0; i < 2; i++) {
          if (p == s->want[i]) {
            s->found[i]++;
            s->sizes[i] = size;
          }
        }
        return true;
      },
      &seen);
  EXPECT_EQ(ok, kEventsOn);
  if (kEventsOn) {
    EXPECT_EQ(seen.total, 2);
    EXPECT_EQ(seen.found[0], 1);
    EXPECT_EQ(seen.found[1], 1);
    EXPECT_EQ(seen.sizes[1], hs_usable_size(theirs));
    // Stopping early.
    int calls = 0;
    hs_memory_events_visit(
        [](void*, size_t, void* arg) {
          ++*static_cast<int*>(arg);
          return false;
        },
        &calls);
    EXPECT_EQ(calls, 1);
  } else {
    EXPECT_EQ(seen.total, 0);
  }
  EXPECT_FALSE(hs_memory_events_visit(nullptr, nullptr));
  hs_free(mine);
  hs_free(theirs);
}

TEST(MemoryEventsUnwrapped, OsMemoryWithAlignment) {
  for (size_t alignment : {size_t{0}, size_t{8}, size_t{64}, size_t{4096}, size_t{1} << 16}) {
    char* p = static_cast<char*>(hs_unwrapped_malloc(1000, alignment));
    ASSERT_NE(p, nullptr);
    size_t want = alignment == 0 ? sizeof(void*) : alignment;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % want, 0u);
    EXPECT_EQ(hs_usable_size(p), 0u);  // not a block of the allocator
    std::memset(p, 3, 1000);
    char* q = static_cast<char*>(hs_unwrapped_realloc(p, 20000, alignment));
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q[999], 3);
    EXPECT_EQ(hs_unwrapped_realloc(q, 0, alignment), nullptr);
  }
  EXPECT_EQ(hs_unwrapped_malloc(10, 24), nullptr);
  EXPECT_EQ(hs_unwrapped_malloc(SIZE_MAX - 10, 0), nullptr);
  hs_unwrapped_free(nullptr);
  void* r = hs_unwrapped_realloc(nullptr, 10, 0);
  ASSERT_NE(r, nullptr);
  hs_unwrapped_free(r);
}

TEST(MemoryEventsUnwrapped, NeverCounted) {
  Recorder r;
  Session session(&r);
  void* p = hs_unwrapped_malloc(100, 0);
  hs_unwrapped_free(p);
  EXPECT_EQ(r.count, 0);
}

}  // namespace
}  // namespace hs_events_test
