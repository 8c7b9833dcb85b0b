// The heap_v2 text writer against the grammar both pprof readers accept:
// header on line 1, raw counts, lowercase 0x return addresses, a '#'
// block, and MAPPED_LIBRARIES with one maps-style line per executable segment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <sstream>
#include <string>
#include <vector>

#include "demo_functions.h"
#include "profile_fixture.h"
#include "profiler/profile_writer.h"

namespace hs_test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string write_text(prof::ProfileData& data) {
  prof::OsBuffer out;
  EXPECT_TRUE(prof::write_text_profile(data, out));
  return to_string(out);
}

std::string hex(uintptr_t pc) {
  char buffer[32];
  snprintf(buffer, sizeof buffer, "0x%" PRIxPTR, pc);
  return buffer;
}

struct MappedLine {
  uintptr_t start, limit;
  uint64_t offset;
  std::string path;
};

// The lines after MAPPED_LIBRARIES:, each checked against the maps-line grammar.
std::vector<MappedLine> mapped_libraries(const std::vector<std::string>& lines) {
  std::vector<MappedLine> result;
  bool in_maps = false;
  for (const std::string& line : lines) {
    if (line == "MAPPED_LIBRARIES:") {
      in_maps = true;
      continue;
    }
    if (!in_maps) continue;
    std::vector<std::string> m;
    EXPECT_TRUE(match_shape(line, "H-H r-xp H 00:00 0 /*", &m)) << line;
    if (m.size() != 4) continue;
    EXPECT_GE(m[2].size(), 8u) << "offset printed as %08lx";
    result.push_back({std::stoull(m[0], nullptr, 16), std::stoull(m[1], nullptr, 16),
                      std::stoull(m[2], nullptr, 16), "/" + m[3]});
  }
  return result;
}

// Header: "heap profile: %7llu: %llu [%7llu: %llu] @ heap_v2/N" (captures the five numbers).
bool is_header(const std::string& line, std::vector<std::string>* m = nullptr) {
  return match_shape(line, "heap profile: SN: N [SN: N] @ heap_v2/N", m);
}
// Sample line: counts as in the header, then " 0x<hex>" per frame, at least one.
bool is_sample_line(const std::string& line, std::vector<std::string>* m = nullptr) {
  size_t at = line.find("] @");
  if (at == std::string::npos || !match_shape(line.substr(0, at + 3), "SN: N [SN: N] @", m)) {
    return false;
  }
  std::string_view frames = std::string_view(line).substr(at + 3);
  if (frames.empty()) return false;
  while (!frames.empty()) {
    size_t next = frames.find(' ', 1);
    std::string_view frame = frames.substr(0, next);
    if (!match_shape(frame, " 0xH")) return false;
    frames.remove_prefix(next == std::string_view::npos ? frames.size() : next);
  }
  return true;
}

TEST(TextWriter, HeaderSamplesStatsAndMappedLibraries) {
  DemoAddresses pcs = demo_addresses();
  FakeProfile profile(524288, /*accum=*/true);
  profile.add({pcs.small_c, pcs.entry}, 3, 32, 5);
  profile.add({pcs.big_member, pcs.entry}, 2, 1 << 20, 2);
  profile.add({pcs.entry}, 0, 64, 0);  // nothing left: no line
  prof::ProfileData& data = profile.data();
  data.dropped_samples = 7;
  data.stack_table_overflows = 3;
  data.heap.committed_bytes = 123456;
  std::vector<std::string> lines = lines_of(write_text(data));
  ASSERT_GE(lines.size(), 4u);

  std::vector<std::string> m;
  ASSERT_TRUE(is_header(lines[0], &m)) << lines[0];
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0], "5");                                     // live objects
  EXPECT_EQ(m[1], std::to_string(3 * 32 + 2 * (1 << 20)));  // live bytes
  EXPECT_EQ(m[2], "7");
  EXPECT_EQ(m[3], std::to_string(5 * 32 + 2 * (1 << 20)));
  EXPECT_EQ(m[4], "524288");
  EXPECT_EQ(lines[0], "heap profile:       5: 2097248 [      7: 2097312] @ heap_v2/524288");

  EXPECT_TRUE(is_sample_line(lines[1])) << lines[1];
  EXPECT_EQ(lines[1], "      3: 96 [      5: 160] @ " + hex(pcs.small_c) + " " + hex(pcs.entry));
  EXPECT_TRUE(is_sample_line(lines[2])) << lines[2];
  EXPECT_EQ(lines[2],
            "      2: 2097152 [      2: 2097152] @ " + hex(pcs.big_member) + " " + hex(pcs.entry));
  EXPECT_FALSE(is_sample_line(lines[3])) << "the empty stack got a line";

  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  EXPECT_NE(text.find("\n# heapscope heap stats\n"), std::string::npos);
  EXPECT_NE(text.find("\n# committed_bytes = 123456\n"), std::string::npos);
  EXPECT_NE(text.find("\n# profiler_dropped_samples = 7\n"), std::string::npos);
  EXPECT_NE(text.find("\n# stack_table_overflows = 3\n"), std::string::npos);
  EXPECT_LT(text.find("# heapscope heap stats"), text.find("MAPPED_LIBRARIES:"));

  std::vector<MappedLine> maps = mapped_libraries(lines);
  ASSERT_FALSE(maps.empty());
  EXPECT_EQ(maps[0].path, self_exe_path());  // the main executable first
  bool small_in_main = false;
  bool saw_libc = false;
  for (const MappedLine& map : maps) {
    EXPECT_LT(map.start, map.limit);
    EXPECT_EQ(map.path.find("vdso"), std::string::npos);
    if (map.path == maps[0].path && pcs.small_c - 1 >= map.start && pcs.small_c - 1 < map.limit) {
      small_in_main = true;
    }
    if (map.path.find("libc.so") != std::string::npos) saw_libc = true;
  }
  EXPECT_TRUE(small_in_main);
  EXPECT_TRUE(saw_libc);
}

// Without accumulation the alloc pair is 0 everywhere, so readers show only objects/space
// instead of alloc columns that would repeat the in-use numbers.
TEST(TextWriter, AllocColumnsZeroWithoutAccum) {
  DemoAddresses pcs = demo_addresses();
  FakeProfile profile(4096, /*accum=*/false);
  profile.add({pcs.small_c}, 4, 100, /*accum=*/9);  // accum counts ignored
  std::vector<std::string> lines = lines_of(write_text(profile.data()));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "heap profile:       4: 400 [      0: 0] @ heap_v2/4096");
  EXPECT_EQ(lines[1], "      4: 400 [      0: 0] @ " + hex(pcs.small_c));
}

// Large counts widen the columns but keep one space after each colon (perl needs it).
TEST(TextWriter, WideCountsKeepTheGrammar) {
  DemoAddresses pcs = demo_addresses();
  FakeProfile profile(1, true);
  profile.add({pcs.small_c, pcs.entry}, 123456789, 8, 123456789);
  std::vector<std::string> lines = lines_of(write_text(profile.data()));
  EXPECT_EQ(lines[0], "heap profile: 123456789: 987654312 [123456789: 987654312] @ heap_v2/1");
  EXPECT_TRUE(is_sample_line(lines[1])) << lines[1];
}

TEST(TextWriter, EmptyProfileStillHasHeaderAndMappedLibraries) {
  FakeProfile profile;
  std::vector<std::string> lines = lines_of(write_text(profile.data()));
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "heap profile:       0: 0 [      0: 0] @ heap_v2/524288");
  EXPECT_EQ(lines[1], "# heapscope heap stats");
  std::vector<MappedLine> maps = mapped_libraries(lines);
  ASSERT_FALSE(maps.empty());
  EXPECT_EQ(maps[0].path, self_exe_path());
}

// Deep stacks produce lines longer than the formatter's stack buffer.
TEST(TextWriter, DeepStackIsWrittenWhole) {
  std::vector<uintptr_t> deep(128);
  for (size_t i = 0; i < deep.size(); ++i) deep[i] = 0x7fffabcdef000000 + i;
  FakeProfile profile;
  profile.add(deep, 1, 10);
  std::vector<std::string> lines = lines_of(write_text(profile.data()));
  ASSERT_TRUE(is_sample_line(lines[1]));
  std::string frames = lines[1].substr(lines[1].find('@') + 1);
  EXPECT_EQ(static_cast<size_t>(std::count(frames.begin(), frames.end(), 'x')), deep.size());
  EXPECT_NE(frames.find(" 0x7fffabcdef00007f"), std::string::npos);
}

}  // namespace
}  // namespace hs_test
