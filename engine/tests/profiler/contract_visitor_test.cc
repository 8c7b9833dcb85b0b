// The profiler's API contract, visitors: they may allocate and free, nested calls fail fast, and a
// visit stops early when asked; a snapshot survives stop.
#include "contract_support.h"

namespace {

using namespace hs_prof_contract;

struct ReentrantVisit {
  void* sampled = nullptr;  // freed by the visitor
  void* kept = nullptr;     // allocated by the visitor, freed after
  int calls = 0;
  bool start = true, start_seeded = true, start_ex = true, dump = true, dump_writer = true;
  bool dump_proto_writer = true, visit = true, snapshot = true, stats = true, modules = true;
  bool still_enabled_after_stop = false;
  uint64_t samples_before_reset = 0;
};

bool nested_visit(const hs_prof_sample_info_t*, void*) { return true; }
bool nested_module(const hs_prof_module_info_t*, void*) { return true; }

bool reentrant_visitor(const hs_prof_sample_info_t*, void* arg) {
  auto* v = static_cast<ReentrantVisit*>(arg);
  if (v->calls++ != 0) return true;
  void* scratch = hs_malloc(4096);  // interval 1: would be a sample outside a visitor
  std::memset(scratch, 1, 4096);
  hs_free(scratch);
  v->kept = hs_malloc(777);
  hs_free(v->sampled);  // a sampled block, freed while the visit holds the profiler lock
  v->sampled = nullptr;
  v->start = hs_prof_start(64);
  v->start_seeded = hs_prof_start_seeded(64, 1);
  v->start_ex = hs_prof_start_ex(nullptr);
  v->dump = hs_prof_dump("/dev/null");
  std::string sink;
  v->dump_writer = hs_prof_dump_writer(hs_prof_test::append_writer, &sink);
  v->dump_proto_writer = hs_prof_dump_proto_writer(hs_prof_test::append_writer, &sink);
  v->visit = hs_prof_visit(nested_visit, nullptr);
  hs_prof_snapshot_t* snapshot = hs_prof_snapshot_new();
  v->snapshot = snapshot != nullptr;
  hs_prof_snapshot_free(snapshot);
  v->modules = hs_prof_modules_visit(nested_module, nullptr);
  hs_prof_stop();  // must do nothing from here
  hs_prof_reset();
  v->still_enabled_after_stop = hs_prof_is_enabled();
  return true;
}

TEST_F(ProfContract, VisitorMayAllocateAndFreeSampledBlocksAndNestedCallsFailFast) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 5));
  ReentrantVisit v;
  v.sampled = alloc_distinct(0, 3, 64 * 1024);
  void* other = alloc_distinct(1, 1, 300);
  const hs_prof_stats_t before = prof_stats();
  ASSERT_EQ(before.live_samples, 2u);
  ASSERT_EQ(before.live_bytes, 64u * 1024 + 301);
  ASSERT_TRUE(hs_prof_visit(reentrant_visitor, &v));
  EXPECT_GE(v.calls, 1);
  EXPECT_EQ(v.sampled, nullptr);
  EXPECT_FALSE(v.start);
  EXPECT_FALSE(v.start_seeded);
  EXPECT_FALSE(v.start_ex);
  EXPECT_FALSE(v.dump);
  EXPECT_FALSE(v.dump_writer);
  EXPECT_FALSE(v.dump_proto_writer);
  EXPECT_FALSE(v.visit);
  EXPECT_FALSE(v.snapshot);
  EXPECT_FALSE(v.modules);
  EXPECT_TRUE(v.still_enabled_after_stop);
  hs_prof_stats_t after = prof_stats();
  EXPECT_EQ(after.enabled, 1);
  EXPECT_EQ(after.sample_interval, 1u) << "a nested start must not change the session";
  EXPECT_EQ(after.seed, 5u);
  EXPECT_EQ(after.live_samples, 1u) << "the freed sample is gone, the visitor's own blocks "
                                       "were not sampled";
  EXPECT_EQ(after.live_bytes, 301u);
  EXPECT_EQ(after.unique_stacks, 1u) << "the emptied stack is released after the visit";
  hs_prof_test::VisitSums sums = hs_prof_test::visit_now();
  EXPECT_EQ(sums.stacks, 1u);
  EXPECT_EQ(sums.live_bytes, 301u);
  hs_free(v.kept);  // not a sample: nothing changes
  EXPECT_EQ(prof_stats().live_samples, 1u);
  hs_free(other);
  EXPECT_EQ(prof_stats().live_samples, 0u);
  EXPECT_EQ(prof_stats().unique_stacks, 0u);
}

bool stats_in_visitor(const hs_prof_sample_info_t*, void* arg) {
  hs_prof_stats_t s = hs_prof_test::blank_stats();
  *static_cast<int*>(arg) = hs_prof_stats_get(&s) ? 1 : 0;
  return false;
}

// Regression (fixed in efb6301): profile.h says "Calls made from inside a visitor callback
// (hs_prof_visit) fail fast (return false / NULL / do nothing)", but hs_prof_stats_get has no such
// check and succeeds inside a visitor (api.cc hs_prof_stats_get tests neither t_suppress nor
// t_lock_held). Harmless (the lock is held by this thread), but not what is documented.
TEST_F(ProfContract, StatsGetInsideVisitorFailsFastAsDocumented) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 6));
  void* p = hs_malloc(128);
  int result = -1;
  ASSERT_TRUE(hs_prof_visit(stats_in_visitor, &result));
  EXPECT_EQ(result, 0) << "hs_prof_stats_get succeeded inside a visitor";
  hs_free(p);
}

bool stop_after_one(const hs_prof_sample_info_t*, void* arg) {
  ++*static_cast<int*>(arg);
  return false;
}

TEST_F(ProfContract, VisitStopsEarlyAndSnapshotSurvivesStop) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 8));
  std::vector<void*> blocks;
  for (int i = 0; i < 40; ++i) blocks.push_back(alloc_distinct(i, i % 10, 200));
  int calls = 0;
  ASSERT_TRUE(hs_prof_visit(stop_after_one, &calls));
  EXPECT_EQ(calls, 1);
  hs_prof_snapshot_t* snapshot = hs_prof_snapshot_new();
  ASSERT_NE(snapshot, nullptr);
  hs_prof_test::VisitSums live = hs_prof_test::visit_now();
  hs_prof_test::VisitSums snap;
  ASSERT_TRUE(hs_prof_snapshot_visit(snapshot, hs_prof_test::VisitSums::add, &snap));
  snap.sort();
  EXPECT_EQ(live.live_objects, 40u);
  EXPECT_EQ(live.live_bytes, 40u * 200 + 60);  // sites add 0..3 bytes
  // The text header carries the same raw totals.
  hs_prof_test::HeaderCounts header = hs_prof_test::header_counts(hs_prof_test::dump_text());
  EXPECT_EQ(header.objects, 40u);
  EXPECT_EQ(header.bytes, 40u * 200 + 60);
  EXPECT_EQ(header.accum_objects, 0u) << "no accumulation in this session";
  EXPECT_EQ(snap.per_stack, live.per_stack);
  EXPECT_TRUE(snap.consistent);
  for (void* p : blocks) hs_free(p);
  hs_prof_stop();
  hs_prof_test::VisitSums after;
  ASSERT_TRUE(hs_prof_snapshot_visit(snapshot, hs_prof_test::VisitSums::add, &after));
  after.sort();
  EXPECT_EQ(after.per_stack, live.per_stack) << "a snapshot is a copy, valid after stop";
  hs_prof_snapshot_free(snapshot);
}

}  // namespace
