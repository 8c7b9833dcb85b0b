// The profiler's API contract, profiles: an empty profile is well formed, dumps to paths (and bad
// paths fail), and accumulate mode keeps cumulative counts until reset.
#include <unistd.h>

#include <string>

#include "contract_support.h"

namespace {

using namespace hs_prof_contract;

TEST_F(ProfContract, EmptyProfileIsWellFormed) {
  ASSERT_TRUE(hs_prof_start_seeded(4096, 3));
  ASSERT_EQ(prof_stats().live_samples, 0u);
  std::string text = hs_prof_test::dump_text();
  ASSERT_FALSE(text.empty());
  std::string header = hs_prof_test::first_line(text);
  EXPECT_EQ(header.rfind("heap profile:", 0), 0u) << header;
  EXPECT_NE(header.find("@ heap_v2/4096"), std::string::npos) << header;
  EXPECT_NE(header.find(" 0: 0 ["), std::string::npos) << header;
  EXPECT_NE(text.find("\nMAPPED_LIBRARIES:\n"), std::string::npos);
  EXPECT_EQ(hs_prof_test::text_sample_lines(text), 0u) << text;
  std::string proto;
  ASSERT_TRUE(hs_prof_dump_proto_writer(hs_prof_test::append_writer, &proto));
  ASSERT_GE(proto.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(proto[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(proto[1]), 0x8b);
  EXPECT_EQ(hs_prof_test::visit_now().stacks, 0u);
  // Against a non-empty one: the same dump shows the sample lines.
  void* p = hs_malloc(1 << 20);  // at 4 KiB: sampled with probability 1 - e^-256
  text = hs_prof_test::dump_text();
  EXPECT_GE(hs_prof_test::text_sample_lines(text), 1u);
  hs_free(p);
}

TEST_F(ProfContract, DumpToPathAndBadPathFails) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 9));
  void* p = alloc_distinct(2, 2, 1000);
  hs_prof_test::TempDir dir;
  ASSERT_TRUE(hs_prof_dump(dir.file("a.heap").c_str()));
  ASSERT_TRUE(hs_prof_dump_proto(dir.file("a.pb.gz").c_str()));
  std::string text = hs_prof_test::read_file(dir.file("a.heap"));
  EXPECT_EQ(text.rfind("heap profile:", 0), 0u);
  EXPECT_EQ(hs_prof_test::text_sample_lines(text), 1u);
  std::string proto = hs_prof_test::read_file(dir.file("a.pb.gz"));
  ASSERT_GE(proto.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(proto[0]), 0x1f);
  EXPECT_FALSE(hs_prof_dump(dir.file("missing/dir/a.heap").c_str()));
  EXPECT_FALSE(hs_prof_dump(nullptr));
  EXPECT_FALSE(hs_prof_dump_format(dir.file("b").c_str(), 17));
  EXPECT_FALSE(hs_prof_test::file_exists(dir.file("b"))) << "nothing is created for a bad format";
  // Escapes as in every profile path; a path given in code is replaced when it exists.
  ASSERT_TRUE(hs_prof_dump(dir.file("c.%p.%%.heap").c_str()));
  std::string expanded = dir.file("c." + std::to_string(getpid()) + ".%.heap");
  EXPECT_EQ(hs_prof_test::read_file(expanded).rfind("heap profile:", 0), 0u) << expanded;
  ASSERT_TRUE(hs_prof_dump(dir.file("c.%p.%%.heap").c_str()));
  EXPECT_FALSE(hs_prof_test::file_exists(
      dir.file("c." + std::to_string(getpid()) + ".%." + std::to_string(getpid()) + ".heap")));
  hs_free(p);
}

TEST_F(ProfContract, AccumModeKeepsCumulativeCountsUntilReset) {
  hs_prof_config_t c = HS_PROF_CONFIG_INIT;
  c.mode = HS_PROF_OVERRIDE;
  c.fields = HS_PROF_FIELD_SAMPLE_INTERVAL | HS_PROF_FIELD_ACCUM;
  c.sample_interval = 1;
  c.accum = 1;
  ASSERT_TRUE(hs_prof_start_ex(&c));
  std::vector<void*> blocks;
  for (int i = 0; i < 64; ++i) blocks.push_back(alloc_distinct(i, i % 4, 256));
  for (int i = 0; i < 32; ++i) hs_free(blocks[static_cast<size_t>(i)]);
  hs_prof_stats_t s = prof_stats();
  EXPECT_EQ(s.accum, 1);
  EXPECT_EQ(s.live_samples, 32u);
  EXPECT_EQ(s.accum_samples, 64u);
  EXPECT_GE(s.accum_bytes, 64u * 256);
  for (int i = 32; i < 64; ++i) hs_free(blocks[static_cast<size_t>(i)]);
  s = prof_stats();
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.accum_samples, 64u);
  EXPECT_GT(s.unique_stacks, 0u) << "accum mode keeps the stacks of freed samples";
  hs_prof_test::VisitSums sums = hs_prof_test::visit_now();
  EXPECT_EQ(sums.accum_objects, 64u);
  EXPECT_EQ(sums.live_objects, 0u);
  hs_prof_test::HeaderCounts header = hs_prof_test::header_counts(hs_prof_test::dump_text());
  EXPECT_EQ(header.objects, 0u);
  EXPECT_EQ(header.accum_objects, 64u);
  EXPECT_EQ(header.accum_bytes, s.accum_bytes);
  hs_prof_reset();
  s = prof_stats();
  EXPECT_EQ(s.accum_samples, 0u);
  EXPECT_EQ(s.accum_bytes, 0u);
  EXPECT_EQ(s.unique_stacks, 0u);
  EXPECT_EQ(hs_prof_test::visit_now().stacks, 0u);
}

}  // namespace
