// profiler/gzip_writer: what it writes must decode with independent decoders (zlib's inflate,
// which also checks the CRC-32 and length in the trailer, and the gzip program) to exactly the
// input, for inputs that exercise literals, every match length and distance, and the window
// edge; and it must actually compress what profiles look like.
#include "profiler/gzip_writer.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "base/splitmix64.h"
#include "profile_fixture.h"

namespace {

namespace prof = heapscope::prof;

std::string gzip(const std::string& input) {
  prof::OsBuffer out;
  EXPECT_TRUE(prof::gzip_append(reinterpret_cast<const uint8_t*>(input.data()), input.size(), out));
  return std::string(reinterpret_cast<const char*>(out.data()), out.size());
}

std::string random_bytes(size_t n, uint64_t seed, unsigned alphabet = 256) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    seed += heapscope::base::kGolden;
    s[i] = static_cast<char>(heapscope::base::splitmix64_mix(seed) % alphabet);
  }
  return s;
}

// Repeats of random-length pieces copied from random earlier distances (up to `max_distance`).
std::string with_matches(size_t n, uint64_t seed, size_t max_distance) {
  std::string s = random_bytes(64, seed);
  while (s.size() < n) {
    seed += heapscope::base::kGolden;
    uint64_t r = heapscope::base::splitmix64_mix(seed);
    size_t distance = 1 + r % (s.size() < max_distance ? s.size() : max_distance);
    size_t length = 1 + (r >> 20) % 300;
    for (size_t i = 0; i < length; ++i) s.push_back(s[s.size() - distance]);
    s.push_back(static_cast<char>(r >> 40));
  }
  s.resize(n);
  return s;
}

TEST(GzipWriter, Crc32KnownValues) {
  EXPECT_EQ(prof::crc32(reinterpret_cast<const uint8_t*>("123456789"), 9), 0xCBF43926u);
  EXPECT_EQ(prof::crc32(nullptr, 0), 0u);
}

TEST(GzipWriter, ZlibDecodesExactlyTheInput) {
  std::vector<std::string> inputs = {"",
                                     "a",
                                     "ab",
                                     "abc",
                                     "abcabcabcabcabc",
                                     std::string(100000, 'x'),
                                     random_bytes(70000, 1),
                                     random_bytes(200000, 2, 4),
                                     with_matches(300000, 3, 32768),
                                     with_matches(100000, 4, 40000),
                                     with_matches(5000, 5, 3)};
  // Every match length 3..258 once, each after a fresh literal.
  std::string lengths;
  for (size_t length = 3; length <= 258; ++length) {
    lengths += static_cast<char>(length);
    lengths += std::string(length, static_cast<char>(length));
  }
  inputs.push_back(lengths);
  // Every byte value as a literal (both halves of the fixed literal code).
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes += static_cast<char>(b);
  inputs.push_back(bytes);
  for (const std::string& input : inputs) {
    std::string compressed = gzip(input);
    ASSERT_GE(compressed.size(), 18u);
    EXPECT_EQ(hs_test::gunzip(compressed), input) << "input of " << input.size() << " bytes";
  }
}

TEST(GzipWriter, CompressesRepetitiveData) {
  // 10 000 pseudo profile records: small varints and repeated strings.
  std::string input;
  for (int i = 0; i < 10000; ++i) {
    input += "\x0a\x04";
    input += static_cast<char>(i % 7);
    input += static_cast<char>(i % 13);
    input += "std::vector<int>::push_back";
  }
  std::string compressed = gzip(input);
  EXPECT_EQ(hs_test::gunzip(compressed), input);
  EXPECT_LT(compressed.size() * 10, input.size()) << compressed.size() << " of " << input.size();
}

TEST(GzipWriter, GzipProgramDecodes) {
  if (system("gzip --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no gzip program";
  std::string input = with_matches(200000, 7, 32768);
  std::string path = testing::TempDir() + "hs_gzip_writer_" + std::to_string(getpid()) + ".gz";
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::string compressed = gzip(input);
  fwrite(compressed.data(), 1, compressed.size(), f);
  fclose(f);
  FILE* pipe = popen(("gzip -dc " + path).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string decoded;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, pipe)) > 0) decoded.append(chunk, n);
  EXPECT_EQ(pclose(pipe), 0);
  unlink(path.c_str());
  EXPECT_EQ(decoded, input);
}

}  // namespace
