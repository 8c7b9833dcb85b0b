// Runs a fuzz target without libFuzzer, for builds that have none: first every file of the
// given corpus directories (the seeds in fuzz/corpus/<target>/), then seeded pseudo-random
// inputs: random bytes, alternating (when there is a corpus) with a seed file cut short and
// with a few bytes changed, so structured readers get past their first byte check. A finding
// crashes or aborts the driver, which fails its ctest.
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

using Bytes = std::vector<uint8_t>;

// Runs every file of `dir` (sorted, so every run feeds them in the same order) and keeps them.
void run_corpus(const std::filesystem::path& dir, std::vector<Bytes>& seeds) {
  std::set<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.insert(entry.path());
  }
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(seeds.back().data(), seeds.back().size());
  }
}

// A seed cut at a random length with up to 8 random bytes overwritten (the first byte, which
// selects a reader in some targets, is kept).
Bytes mutated(const Bytes& seed, heapscope::base::SplitMix64& rng) {
  Bytes input(seed.begin(), seed.begin() + static_cast<long>(rng.next() % (seed.size() + 1)));
  for (uint64_t n = rng.next() % 9; n > 0 && input.size() > 1; --n) {
    input[1 + rng.next() % (input.size() - 1)] = static_cast<uint8_t>(rng.next());
  }
  return input;
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 2000;
  heapscope::base::SplitMix64 rng(argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 20261130);
  std::vector<Bytes> seeds;
  for (int i = 3; i < argc; ++i) run_corpus(argv[i], seeds);
  Bytes input;
  for (long i = 0; i < iterations; ++i) {
    if (i % 2 == 1 && !seeds.empty()) {
      input = mutated(seeds[rng.next() % seeds.size()], rng);
    } else {
      input.resize(rng.next() % 1024);
      for (uint8_t& byte : input) byte = static_cast<uint8_t>(rng.next());
    }
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::printf("%s: %zu corpus files and %ld generated inputs ok\n",
              std::filesystem::path(argv[0]).filename().c_str(), seeds.size(), iterations);
  return 0;
}
