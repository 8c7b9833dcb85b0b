// The profiler on Windows, end to end: the sampler, the stack from the OS unwinder
// (RtlCaptureStackBackTrace), the module list from the loader, and the dumps. A known chain
// (level_one -> level_two -> hs_malloc) allocates kCount blocks of kSize bytes; the text
// profile must hold the chain's stacks and name this executable among its modules, and the
// symbolized proto (written to HS_PROFILE_DIR) is read back on the host by `go tool pprof`
// (windows_pprof_check.sh), which must find the chain's function names in it: they come from
// the image's COFF symbols, resolved at dump time.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "alloc_chain.h"

namespace {

constexpr size_t kInterval = 4096;
constexpr size_t kCount = 8192;
constexpr size_t kSize = 1024;
constexpr uint64_t kSeed = 20261203;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(WindowsProfile, SampledChainIsDumpedWithStacksAndModules) {
  ASSERT_TRUE(hs_prof_start_seeded(kInterval, kSeed));
  std::vector<void*> blocks(kCount, nullptr);
  level_one(blocks.data(), kCount, kSize);
  const std::string dir = HS_PROFILE_DIR;
  const std::string text_path = dir + "/windows.heap.txt";
  const std::string symbolized_path = dir + "/windows.sym.pb.gz";
  // Without function names: the read-back check's positive control (windows.cmake).
  const std::string raw_path = dir + "/windows.raw.pb.gz";
  ASSERT_TRUE(hs_prof_dump(text_path.c_str()));
  ASSERT_TRUE(hs_prof_dump_format(raw_path.c_str(), HS_PROF_FORMAT_PROTO));
  ASSERT_TRUE(hs_prof_dump_format(symbolized_path.c_str(), HS_PROF_FORMAT_PROTO_SYMBOLIZED));
  for (void* p : blocks) hs_free(p);
  hs_prof_stop();

  const std::string text = read_file(text_path);
  ASSERT_EQ(text.rfind("heap profile:", 0), 0u) << text.substr(0, 200);
  // 8 MiB sampled every 4 KiB on average: about 2000 samples, in stacks of several frames.
  size_t stacks = 0;
  size_t deep = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find(" @ ");
    if (at == std::string::npos) continue;
    ++stacks;
    size_t frames = 0;
    for (size_t i = line.find("0x", at); i != std::string::npos; i = line.find("0x", i + 2))
      ++frames;
    if (frames >= 3) ++deep;
  }
  EXPECT_GE(stacks, 1u) << text.substr(0, 2000);
  EXPECT_GE(deep, 1u) << "stacks of the chain have its frames: " << text.substr(0, 2000);
  EXPECT_NE(text.find("MAPPED_LIBRARIES:"), std::string::npos);
  EXPECT_NE(text.find("hs_windows_profile_tests.exe"), std::string::npos)
      << "the executable is among the modules:\n"
      << text.substr(text.find("MAPPED_LIBRARIES:"));
  EXPECT_GT(read_file(symbolized_path).size(), 100u);
}

}  // namespace
