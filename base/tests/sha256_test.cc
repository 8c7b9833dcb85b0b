#include "base/sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace heapscope::base {
namespace {

TEST(Sha256, KnownVectors) {  // FIPS 180-2 examples
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// One million 'a' (FIPS 180-2): the file is read in several buffers, so this also checks
// that the chunks are chained rather than restarted.
TEST(Sha256, FileOfOneMillionA) {
  const std::string path = ::testing::TempDir() + "sha256_test_" + std::to_string(getpid());
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(1'000'000, 'a');
  }
  std::string error;
  const auto digest = sha256_file_hex(path, &error);
  std::remove(path.c_str());
  ASSERT_TRUE(digest.has_value()) << error;
  EXPECT_EQ(*digest, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(*digest, sha256_hex(std::string(1'000'000, 'a')));
}

TEST(Sha256, MissingFileSaysWhy) {
  std::string error;
  EXPECT_FALSE(sha256_file_hex("/nonexistent/heapscope", &error).has_value());
  EXPECT_NE(error.find("/nonexistent/heapscope"), std::string::npos) << error;
}

}  // namespace
}  // namespace heapscope::base
