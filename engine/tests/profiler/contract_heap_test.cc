// The profiler's API contract, heaps and reallocation: destroy forgets a heap's samples and delete
// keeps them, realloc in place and moving, growth without copying, calloc/zalloc and aligned
// samples.
#include "contract_support.h"

namespace {

using namespace hs_prof_contract;

TEST_F(ProfContract, HeapDestroyForgetsItsSamplesHeapDeleteKeepsThem) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 21));
  void* outside = hs_malloc(100);
  const hs_prof_stats_t base = prof_stats();
  ASSERT_EQ(base.live_samples, 1u);
  hs_heap_t* heap = hs_heap_new();
  ASSERT_NE(heap, nullptr);
  for (int i = 0; i < 50; ++i)
    ASSERT_NE(hs_heap_malloc(heap, 256 + static_cast<size_t>(i)), nullptr);
  // A huge block too (its own mapping): an alignment above 64 KiB takes that path. (Not a
  // multi-MiB block: at interval 1 its cost was linear in its size, see below.)
  ASSERT_NE(hs_heap_malloc_aligned(heap, 200000, 256 * 1024), nullptr);
  hs_prof_stats_t s = prof_stats();
  EXPECT_EQ(s.live_samples, base.live_samples + 51);
  hs_heap_destroy(heap);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, base.live_samples);
  EXPECT_EQ(s.live_bytes, base.live_bytes);
  EXPECT_EQ(hs_prof_test::visit_now().live_objects, base.live_samples);
  // The destroyed heap's memory is reused: new blocks there are new samples only.
  std::vector<void*> again;
  for (int i = 0; i < 50; ++i) again.push_back(hs_malloc(256 + static_cast<size_t>(i)));
  EXPECT_EQ(prof_stats().live_samples, base.live_samples + 50);
  for (void* p : again) hs_free(p);
  EXPECT_EQ(prof_stats().live_samples, base.live_samples);

  hs_heap_t* kept = hs_heap_new();
  std::vector<void*> blocks;
  for (int i = 0; i < 30; ++i) blocks.push_back(hs_heap_malloc(kept, 512));
  hs_heap_delete(kept);  // blocks move to the default heap and stay samples
  s = prof_stats();
  EXPECT_EQ(s.live_samples, base.live_samples + 30);
  EXPECT_EQ(s.live_bytes, base.live_bytes + 30 * 512);
  for (void* p : blocks) hs_free(p);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, base.live_samples);
  EXPECT_EQ(s.live_bytes, base.live_bytes);
  hs_free(outside);
  EXPECT_EQ(prof_stats().live_samples, 0u);
}

TEST_F(ProfContract, ReallocInPlaceUpdatesBytesAndMovingReallocStaysConsistent) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 31));
  void* p = hs_malloc(1000);
  ASSERT_NE(p, nullptr);
  hs_prof_stats_t s = prof_stats();
  ASSERT_EQ(s.live_samples, 1u);
  ASSERT_EQ(s.live_bytes, 1000u);
  const double estimate_1000 = s.live_bytes_estimate;
  void* q = hs_realloc(p, 900);  // shrink within the block: in place
  ASSERT_EQ(q, p) << "a shrink within the block is expected in place";
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 1u);
  EXPECT_EQ(s.live_bytes, 900u);
  EXPECT_LT(s.live_bytes_estimate, estimate_1000);
  EXPECT_EQ(hs_prof_test::visit_now().live_bytes, 900u);
  // Grow back within the usable size, through hs_expand.
  ASSERT_GE(hs_usable_size(q), 1000u);
  ASSERT_EQ(hs_expand(q, 1000), q);
  s = prof_stats();
  EXPECT_EQ(s.live_bytes, 1000u);
  EXPECT_NEAR(s.live_bytes_estimate, estimate_1000, 1e-6 * estimate_1000);
  // Moving: the old sample is forgotten, the new block is a fresh sample.
  void* moved = hs_realloc(q, 300000);
  ASSERT_NE(moved, nullptr);
  ASSERT_NE(moved, q);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 1u);
  EXPECT_EQ(s.live_bytes, 300000u);
  void* back = hs_realloc(moved, 40);  // moving down to a small class
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 1u);
  EXPECT_EQ(s.live_bytes, 40u);
  hs_free(back);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.live_bytes_estimate, 0.0);
  EXPECT_EQ(s.unique_stacks, 0u);
}

// Growth without copying (a large block over the free slices after it, a huge block by
// remapping) counts as a moving realloc: one live sample, of the new size, whatever path ran;
// an hs_expand that cannot grow leaves the old sample alone. At a 4 KiB interval every block
// here is sampled (P = 1 - exp(-size/4096)).
TEST_F(ProfContract, GrowthWithoutCopyingKeepsOneSampleOfTheNewSize) {
  ASSERT_TRUE(hs_prof_start_seeded(4096, 73));
  auto live = [] {
    const hs_prof_stats_t s = prof_stats();
    return std::make_pair(s.live_samples, s.live_bytes);
  };
  void* p = hs_malloc(100000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(live(), std::make_pair(uint64_t{1}, uint64_t{100000}));
  p = hs_realloc(p, 3000000);  // large: in place over free slices, or moved
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(live(), std::make_pair(uint64_t{1}, uint64_t{3000000}));
  // A growing medium block: moved onto a slice of its own, then grown in place there.
  void* grown = hs_malloc(20000);
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(live(), std::make_pair(uint64_t{2}, uint64_t{3020000}));
  for (size_t next : {40000u, 60000u, 65536u}) {
    grown = hs_realloc(grown, next);
    ASSERT_NE(grown, nullptr);
    EXPECT_EQ(live(), std::make_pair(uint64_t{2}, uint64_t{3000000} + next)) << next;
  }
  hs_free(grown);
  EXPECT_EQ(live(), std::make_pair(uint64_t{1}, uint64_t{3000000}));
  p = hs_realloc(p, 40u << 20);  // large to huge: moved
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(live(), std::make_pair(uint64_t{1}, uint64_t{40} << 20));
  p = hs_realloc(p, 90u << 20);  // huge to huge: remapped (in place or moved)
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(live(), std::make_pair(uint64_t{1}, uint64_t{90} << 20));
  void* neighbour = hs_malloc(30u << 20);  // often right after p: expanding may fail
  ASSERT_NE(neighbour, nullptr);
  const auto before_expand = live();
  if (hs_expand(p, 150u << 20) == p) {
    EXPECT_EQ(live(), std::make_pair(before_expand.first, before_expand.second + (60u << 20)));
  } else {
    EXPECT_EQ(live(), before_expand) << "a failed hs_expand must keep the block's sample";
  }
  hs_free(neighbour);
  hs_free(p);
  EXPECT_EQ(live(), std::make_pair(uint64_t{0}, uint64_t{0}));
}

// Zeroing and array allocations, small and huge, are samples with their requested bytes.
TEST_F(ProfContract, CallocAndZallocSamplesCountRequestedBytes) {
  ASSERT_TRUE(hs_prof_start_seeded(4096, 71));
  void* huge = hs_calloc(1000, 3000);  // 3 MB: a dedicated zeroed mapping
  ASSERT_NE(huge, nullptr);
  hs_prof_stats_t s = prof_stats();
  EXPECT_EQ(s.live_samples, 1u);
  EXPECT_EQ(s.live_bytes, 3000000u);
  void* zeroed = hs_zalloc(5u << 20);
  ASSERT_NE(zeroed, nullptr);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 2u);
  EXPECT_EQ(s.live_bytes, 3000000u + (5u << 20));
  hs_free(huge);
  hs_free(zeroed);
  hs_prof_stop();
  ASSERT_TRUE(hs_prof_start_seeded(1, 72));
  void* small = hs_calloc(10, 30);
  void* small_zero = hs_zalloc(123);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 2u);
  EXPECT_EQ(s.live_bytes, 300u + 123u);
  hs_free(small);
  hs_free(small_zero);
  EXPECT_EQ(prof_stats().live_samples, 0u);
}

std::vector<void*> aligned_blocks(uint64_t* requested) {
  std::vector<void*> blocks;
  *requested = 0;
  for (int i = 0; i < 64; ++i) {
    size_t size = 100 + 13 * static_cast<size_t>(i);
    size_t alignment = size_t{8} << (i % 10);  // 8 .. 4096
    void* p = hs_malloc_aligned(size, alignment);
    EXPECT_NE(p, nullptr);
    EXPECT_TRUE(hs_test::is_aligned(p, alignment));
    blocks.push_back(p);
    *requested += size;
  }
  return blocks;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Regression (fixed in efb6301): when an allocation crossed the countdown,
// sample_countdown_expired drew distances in a loop until the countdown was positive again -
// one exp draw (log1p) per `interval` bytes of the allocation, O(size / interval). At interval
// 1 a 4 MiB block cost ~4M draws (0.15-0.2 s of CPU); a 1 GiB block, about a minute. The
// exponential is memoryless, so the distance past the end of the block is one fresh draw.
TEST_F(ProfContract, LargeAllocationCostDoesNotGrowWithSizeOverInterval) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 61));
  double before = thread_cpu_seconds();
  void* p = hs_malloc(4u << 20);
  double seconds = thread_cpu_seconds() - before;
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(prof_stats().live_samples, 1u);
  EXPECT_LT(seconds, 0.02) << "one 4 MiB allocation at interval 1 took " << seconds << " s of CPU";
  hs_free(p);
}

TEST_F(ProfContract, AlignedAndCrossThreadFreesReturnToBaseline) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 41));
  uint64_t requested = 0;
  std::vector<void*> blocks = aligned_blocks(&requested);
  hs_prof_stats_t s = prof_stats();
  EXPECT_EQ(s.live_samples, 64u);
  EXPECT_GE(s.live_bytes, requested);
  std::thread other([&] {
    for (void* p : blocks) hs_free(p);
  });
  other.join();
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.unique_stacks, 0u);
}

// Regression (fixed in efb6301): profile.h defines live_bytes as "their requested bytes", and the
// allocator's own statistics count what the caller asked for; but an aligned allocation (16 <
// alignment <= the natural-alignment limit) is sampled and recorded with its size rounded up to the
// alignment (heap_malloc_aligned calls heap_malloc(rounded)): hs_malloc_aligned(100, 4096)
// shows as 4096 bytes in profiles.
TEST_F(ProfContract, AlignedSamplesRecordRequestedBytes) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 42));
  void* one = hs_malloc_aligned(100, 4096);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(prof_stats().live_bytes, 100u);
  hs_free(one);
  uint64_t requested = 0;
  std::vector<void*> blocks = aligned_blocks(&requested);
  EXPECT_EQ(prof_stats().live_bytes, requested);
  EXPECT_EQ(hs_prof_test::visit_now().live_bytes, requested);
  for (void* p : blocks) hs_free(p);
}

}  // namespace
