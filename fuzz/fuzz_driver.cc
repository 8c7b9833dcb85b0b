// Runs the fuzz target on seeded pseudo-random inputs, for builds without libFuzzer.
// Usage: api_sequence_fuzz_driver [iterations] [seed]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/splitmix64.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 2000;
  heapscope::base::SplitMix64 rng(argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 20261130);
  std::vector<uint8_t> input;
  for (long i = 0; i < iterations; ++i) {
    input.resize(rng.next() % 1024);
    for (uint8_t& byte : input) byte = static_cast<uint8_t>(rng.next());
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::printf("api_sequence_fuzz_driver: %ld inputs ok\n", iterations);
  return 0;
}
