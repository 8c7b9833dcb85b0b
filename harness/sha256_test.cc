#include "sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "run_command.h"

namespace heapscope::harness {
namespace {

TEST(Sha256, KnownVectors) {  // FIPS 180-2 examples
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, FileMatchesSha256sum) {
  const std::string path = ::testing::TempDir() + "sha256_test_" + std::to_string(getpid());
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 100000; ++i) out << i << ',';  // larger than one read buffer
  }
  std::string error;
  const auto digest = sha256_file_hex(path, &error);
  ASSERT_TRUE(digest.has_value()) << error;
  const CommandResult r = run_command({"sha256sum", path});
  ASSERT_TRUE(r.ok()) << r.error << r.err;
  EXPECT_EQ(*digest, r.out.substr(0, 64));
  std::remove(path.c_str());
}

TEST(Sha256, MissingFileSaysWhy) {
  std::string error;
  EXPECT_FALSE(sha256_file_hex("/nonexistent/heapscope", &error).has_value());
  EXPECT_NE(error.find("/nonexistent/heapscope"), std::string::npos) << error;
}

}  // namespace
}  // namespace heapscope::harness
