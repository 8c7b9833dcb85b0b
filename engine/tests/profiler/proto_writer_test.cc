// The profile.proto writer, decoded by a strict test decoder: validity
// rules pprof enforces, unsampled values, address = return address - 1, mappings with the
// main executable first, and the symbolized variant's Function/Line records.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <set>
#include <string>

#include "demo_functions.h"
#include "profile_fixture.h"
#include "profiler/profile_writer.h"
#include "proto_decoder.h"

namespace hs_test {
namespace {

DecodedProfile write_and_decode(prof::ProfileData& data, bool symbolize, bool gzip) {
  prof::OsBuffer out;
  prof::ProtoOptions options;
  options.symbolize = symbolize;
  options.gzip = gzip;
  EXPECT_TRUE(prof::write_proto_profile(data, options, out));
  std::string bytes = to_string(out);
  if (gzip) {
    EXPECT_GE(bytes.size(), 2u);
    EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0x1f);
    EXPECT_EQ(static_cast<uint8_t>(bytes[1]), 0x8b);
    bytes = gunzip(bytes);
    EXPECT_FALSE(bytes.empty()) << "not a gzip stream";
  }
  DecodedProfile decoded;
  EXPECT_TRUE(decode_profile(bytes, &decoded)) << "malformed protobuf";
  return decoded;
}

// pprof's own decode-time rules: any of these failing surfaces as "unrecognized format".
void expect_valid(const DecodedProfile& p) {
  ASSERT_FALSE(p.strings.empty());
  EXPECT_EQ(p.strings[0], "");
  EXPECT_EQ(p.time_nanos_count, 1);
  std::set<uint64_t> ids;
  for (const auto& l : p.locations) {
    EXPECT_NE(l.id, 0u);
    EXPECT_TRUE(ids.insert(l.id).second) << "duplicate location id " << l.id;
    EXPECT_LE(l.mapping_id, p.mappings.size());
    for (uint64_t f : l.function_ids) EXPECT_NE(p.function(f), nullptr);
  }
  for (const auto& s : p.samples) {
    EXPECT_EQ(s.values.size(), p.sample_types.size());
    for (uint64_t id : s.location_ids) EXPECT_NE(p.location(id), nullptr);
  }
  for (size_t i = 0; i < p.mappings.size(); ++i) {
    EXPECT_EQ(p.mappings[i].id, i + 1);
    EXPECT_LT(p.mappings[i].filename, p.strings.size());
    EXPECT_LT(p.mappings[i].build_id, p.strings.size());
  }
  for (const auto& f : p.functions) {
    EXPECT_LT(f.name, p.strings.size());
    EXPECT_LT(f.system_name, p.strings.size());
  }
}

const DecodedProfile::Mapping* mapping_of(const DecodedProfile& p, uint64_t address) {
  for (const auto& m : p.mappings)
    if (address >= m.start && address < m.limit) return &m;
  return nullptr;
}

class ProtoWriter : public ::testing::Test {
 protected:
  void SetUp() override {
    pcs_ = demo_addresses();
    profile_.add({pcs_.small_c, pcs_.entry}, 3, 32, 5);
    profile_.add({pcs_.big_member, pcs_.entry}, 2, 1 << 20, 2);
    profile_.add({0x10}, 1, 4096, 1);  // inside no module
    prof::ProfileData& data = profile_.data();
    data.dropped_samples = 7;
    data.stack_table_overflows = 3;
  }
  DemoAddresses pcs_{};
  FakeProfile profile_{524288, /*accum=*/true};
};

TEST_F(ProtoWriter, ValidMessageWithHeapSampleTypes) {
  for (bool gzip : {false, true}) {
    DecodedProfile p = write_and_decode(profile_.data(), false, gzip);
    expect_valid(p);
    ASSERT_EQ(p.sample_types.size(), 4u);
    const char* names[4][2] = {{"alloc_objects", "count"},
                               {"alloc_space", "bytes"},
                               {"inuse_objects", "count"},
                               {"inuse_space", "bytes"}};
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(p.str(p.sample_types[i].type), names[i][0]);
      EXPECT_EQ(p.str(p.sample_types[i].unit), names[i][1]);
    }
    EXPECT_EQ(p.str(p.default_sample_type), "inuse_space");
    EXPECT_EQ(p.str(p.period_type.type), "space");
    EXPECT_EQ(p.str(p.period_type.unit), "bytes");
    EXPECT_EQ(p.period, 524288);
    EXPECT_EQ(p.time_nanos, 1700000000123456789LL);
    ASSERT_EQ(p.comments.size(), 1u);
    EXPECT_EQ(p.str(p.comments[0]), "heapscope: dropped_samples=7 stack_table_overflows=3");
  }
}

TEST_F(ProtoWriter, ValuesAreTheRoundedEstimates) {
  DecodedProfile p = write_and_decode(profile_.data(), false, true);
  ASSERT_EQ(p.samples.size(), profile_.stacks().size());
  for (size_t i = 0; i < p.samples.size(); ++i) {
    const prof::ProfileStack& s = profile_.stacks()[i];
    const auto& v = p.samples[i].values;
    EXPECT_EQ(v[0], static_cast<uint64_t>(std::llround(s.accum_objects_estimate)));
    EXPECT_EQ(v[1], static_cast<uint64_t>(std::llround(s.accum_bytes_estimate)));
    EXPECT_EQ(v[2], static_cast<uint64_t>(std::llround(s.live_objects_estimate)));
    EXPECT_EQ(v[3], static_cast<uint64_t>(std::llround(s.live_bytes_estimate)));
    ASSERT_EQ(p.samples[i].labels.size(), 1u);
    const auto& label = p.samples[i].labels[0];
    EXPECT_EQ(p.str(label.key), "bytes");
    EXPECT_EQ(p.str(label.num_unit), "bytes");
    EXPECT_EQ(static_cast<uint64_t>(label.num), s.live_bytes / s.live_objects);
  }
  // 2 x 1 MiB at 512 KiB: the Go runtime's own example.
  EXPECT_EQ(p.samples[1].values[3], 2425393u);
}

TEST_F(ProtoWriter, AllocValuesZeroWithoutAccum) {
  profile_.data().accum = false;
  DecodedProfile p = write_and_decode(profile_.data(), false, false);
  ASSERT_FALSE(p.samples.empty());
  for (const auto& s : p.samples) {
    EXPECT_EQ(s.values[0], 0u);
    EXPECT_EQ(s.values[1], 0u);
    EXPECT_GT(s.values[3], 0u);
  }
}

TEST_F(ProtoWriter, LocationsAreUniqueReturnAddressesMinusOne) {
  DecodedProfile p = write_and_decode(profile_.data(), false, false);
  // small_c, entry (shared by two stacks), big_member, 0x10.
  ASSERT_EQ(p.locations.size(), 4u);
  ASSERT_EQ(p.samples.size(), 3u);
  const auto* small = p.location(p.samples[0].location_ids[0]);
  const auto* entry = p.location(p.samples[0].location_ids[1]);
  const auto* big = p.location(p.samples[1].location_ids[0]);
  ASSERT_TRUE(small && entry && big);
  EXPECT_EQ(small->address, pcs_.small_c - 1);
  EXPECT_EQ(entry->address, pcs_.entry - 1);
  EXPECT_EQ(big->address, pcs_.big_member - 1);
  EXPECT_EQ(p.samples[1].location_ids[1], entry->id) << "one location per unique address";

  // The test binary is mapping[0] (id 1) and holds the demo functions.
  ASSERT_FALSE(p.mappings.empty());
  EXPECT_EQ(p.str(p.mappings[0].filename), self_exe_path());
  EXPECT_EQ(small->mapping_id, 1u);
  EXPECT_EQ(big->mapping_id, 1u);
  EXPECT_EQ(mapping_of(p, small->address), &p.mappings[0]);
  const auto* outside = p.location(p.samples[2].location_ids[0]);
  ASSERT_NE(outside, nullptr);
  EXPECT_EQ(outside->mapping_id, 0u);
  EXPECT_EQ(outside->address, 0xfu);
  // Unsymbolized: no Line, no Function, no has_functions.
  EXPECT_TRUE(p.functions.empty());
  for (const auto& l : p.locations) EXPECT_TRUE(l.function_ids.empty());
  for (const auto& m : p.mappings) EXPECT_FALSE(m.has_functions);
}

TEST_F(ProtoWriter, MappingsCarryOffsetsAndBuildIds) {
  DecodedProfile p = write_and_decode(profile_.data(), false, false);
  ASSERT_FALSE(p.mappings.empty());
  const auto& main = p.mappings[0];
  EXPECT_LT(main.start, main.limit);
  EXPECT_NE(main.file_offset, 0u) << "a PIE's text segment does not start the file";
  // A build ID is 20 bytes of SHA-1 with GNU ld's default --build-id.
  const std::string& build_id = p.str(main.build_id);
  EXPECT_EQ(build_id.size(), 40u) << build_id;
  EXPECT_EQ(build_id.find_first_not_of("0123456789abcdef"), std::string::npos) << build_id;
  bool saw_libc = false;
  for (const auto& m : p.mappings)
    saw_libc |= p.str(m.filename).find("libc.so") != std::string::npos;
  EXPECT_TRUE(saw_libc);
}

TEST_F(ProtoWriter, SymbolizedNamesDemangledAndMangled) {
  DecodedProfile p = write_and_decode(profile_.data(), true, true);
  expect_valid(p);
  auto function_at = [&](uintptr_t pc) -> const DecodedProfile::Function* {
    for (const auto& l : p.locations) {
      if (l.address == pc - 1 && l.function_ids.size() == 1) return p.function(l.function_ids[0]);
    }
    return nullptr;
  };
  const auto* small = function_at(pcs_.small_c);
  const auto* big = function_at(pcs_.big_member);
  const auto* entry = function_at(pcs_.entry);
  ASSERT_TRUE(small && big && entry);
  EXPECT_EQ(p.str(small->name), "demo_alloc_small_c");
  EXPECT_EQ(p.str(small->system_name), "demo_alloc_small_c");
  EXPECT_EQ(p.str(big->name), "demo::Holder::allocate_big()");
  EXPECT_EQ(p.str(big->system_name), "_ZN4demo6Holder12allocate_bigEv");
  EXPECT_EQ(p.str(entry->name), "demo_entry_point");
  EXPECT_TRUE(p.mappings[0].has_functions);
  EXPECT_EQ(p.functions.size(), 3u) << "one Function per symbol";
}

// A shared library without .symtab (Debian's libc is stripped) is named from .dynsym, after
// its file's build ID matched the loaded module's.
TEST(ProtoWriterSharedLibrary, NamedFromDynamicSymbols) {
  // A PIE takes a library function's address through the GOT: the real one, not a PLT stub.
  auto in_getpid = reinterpret_cast<uintptr_t>(&getpid) + 2;
  FakeProfile profile;
  profile.add({in_getpid, demo_addresses().entry}, 1, 64);
  DecodedProfile p = write_and_decode(profile.data(), true, false);
  expect_valid(p);
  const DecodedProfile::Location* leaf = p.location(p.samples.at(0).location_ids.at(0));
  ASSERT_NE(leaf, nullptr);
  ASSERT_NE(leaf->mapping_id, 0u);
  const auto& mapping = p.mappings[leaf->mapping_id - 1];
  EXPECT_NE(p.str(mapping.filename).find("libc.so"), std::string::npos);
  EXPECT_TRUE(mapping.has_functions);
  ASSERT_EQ(leaf->function_ids.size(), 1u);
  EXPECT_NE(p.str(p.function(leaf->function_ids[0])->name).find("getpid"), std::string::npos);
}

TEST(ProtoWriterEmpty, EmptyProfileIsValid) {
  FakeProfile profile;
  DecodedProfile p = write_and_decode(profile.data(), true, false);
  expect_valid(p);
  EXPECT_TRUE(p.samples.empty());
  EXPECT_TRUE(p.locations.empty());
  EXPECT_EQ(p.sample_types.size(), 4u);
  EXPECT_FALSE(p.mappings.empty());
}

// Many distinct stacks: the location map and the string table both grow past their first size.
TEST(ProtoWriterLarge, ThousandsOfStacks) {
  FakeProfile profile(4096, true);
  DemoAddresses pcs = demo_addresses();
  for (uintptr_t i = 0; i < 5000; ++i)
    profile.add({pcs.small_c, 0x1000 + i * 16, pcs.entry}, 1, 64, 1);
  DecodedProfile p = write_and_decode(profile.data(), true, true);
  expect_valid(p);
  EXPECT_EQ(p.samples.size(), 5000u);
  EXPECT_EQ(p.locations.size(), 5002u);
}

}  // namespace
}  // namespace hs_test
