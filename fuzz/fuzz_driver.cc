// Runs a fuzz target without libFuzzer, for builds that have none: first every file of the
// given corpus directories (the seeds in fuzz/corpus/<target>/), then seeded pseudo-random
// inputs. A finding crashes or aborts the driver, which fails its ctest.
// Usage: <target>_driver [iterations] [seed] [corpus_dir...]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <vector>

#include "base/splitmix64.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// Sorted, so every run feeds the files in the same order.
long run_corpus(const std::filesystem::path& dir) {
  std::set<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.insert(entry.path());
  }
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> input{std::istreambuf_iterator<char>(in),
                                     std::istreambuf_iterator<char>()};
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  return static_cast<long>(files.size());
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 2000;
  heapscope::base::SplitMix64 rng(argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 20261130);
  long corpus_files = 0;
  for (int i = 3; i < argc; ++i) corpus_files += run_corpus(argv[i]);
  std::vector<uint8_t> input;
  for (long i = 0; i < iterations; ++i) {
    input.resize(rng.next() % 1024);
    for (uint8_t& byte : input) byte = static_cast<uint8_t>(rng.next());
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::printf("%s: %ld corpus files and %ld random inputs ok\n",
              std::filesystem::path(argv[0]).filename().c_str(), corpus_files, iterations);
  return 0;
}
