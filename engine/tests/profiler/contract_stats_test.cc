// The profiler's API contract, the size/version-tagged statistics struct: rejected calls write
// nothing, and nothing is ever written past the caller's struct.
#include "contract_support.h"

namespace {

using namespace hs_prof_contract;

TEST_F(ProfContract, StatsRejectsNullSmallSizeAndUnknownVersionWithoutWriting) {
  ASSERT_TRUE(hs_prof_start_seeded(4096, 99));
  EXPECT_FALSE(hs_prof_stats_get(nullptr));
  struct Case {
    size_t size;
    uint32_t version;
  };
  for (Case c : {Case{sizeof(hs_prof_stats_t) - 1, HS_PROF_STATS_VERSION},
                 Case{sizeof(size_t) + sizeof(uint32_t), HS_PROF_STATS_VERSION}, Case{0, 1},
                 Case{sizeof(hs_prof_stats_t), 0}, Case{sizeof(hs_prof_stats_t), 99},
                 Case{sizeof(hs_prof_stats_t), HS_PROF_STATS_VERSION + 1}}) {
    unsigned char buffer[sizeof(hs_prof_stats_t) + 64];
    std::memset(buffer, 0xAB, sizeof buffer);
    hs_prof_stats_t header;
    header.size = c.size;
    header.version = c.version;
    std::memcpy(buffer, &header.size, sizeof header.size);
    std::memcpy(buffer + offsetof(hs_prof_stats_t, version), &header.version,
                sizeof header.version);
    unsigned char before[sizeof buffer];
    std::memcpy(before, buffer, sizeof buffer);
    EXPECT_FALSE(hs_prof_stats_get(reinterpret_cast<hs_prof_stats_t*>(buffer)))
        << "size " << c.size << " version " << c.version;
    EXPECT_EQ(std::memcmp(before, buffer, sizeof buffer), 0)
        << "a refused call wrote into the struct (size " << c.size << ")";
  }
}

TEST_F(ProfContract, StatsNeverWritesPastTheStructIntoAPoisonedTail) {
  ASSERT_TRUE(hs_prof_start_seeded(1, 4242));
  void* p = hs_malloc(200);  // interval 1: certainly sampled
  ASSERT_NE(p, nullptr);
  // A caller whose (future) header declares a larger struct: only the fields this library
  // knows are written, the tail stays poisoned. The API refuses any size smaller than the
  // version-1 struct (the first published one), so no smaller "old" size can be crafted.
  constexpr size_t kTail = 48;
  unsigned char buffer[sizeof(hs_prof_stats_t) + kTail];
  std::memset(buffer, 0xAB, sizeof buffer);
  auto* s = reinterpret_cast<hs_prof_stats_t*>(buffer);
  s->size = sizeof buffer;
  s->version = HS_PROF_STATS_VERSION;
  ASSERT_TRUE(hs_prof_stats_get(s));
  for (size_t i = sizeof(hs_prof_stats_t); i < sizeof buffer; ++i) {
    ASSERT_EQ(buffer[i], 0xAB) << "byte " << i << " past the struct was written";
  }
  hs_prof_stats_t copy;
  std::memcpy(&copy, buffer, sizeof copy);
  EXPECT_EQ(copy.enabled, 1);
  EXPECT_EQ(copy.sample_interval, 1u);
  EXPECT_EQ(copy.seed, 4242u);
  EXPECT_EQ(copy.live_samples, 1u);
  EXPECT_EQ(copy.live_bytes, 200u);
  EXPECT_EQ(copy.unique_stacks, 1u);
  EXPECT_EQ(copy.total_samples, 1u);
  hs_free(p);
}

}  // namespace
