// Synthetic raw runs ("heapscope.raw-run" v1) for the site tests and the publish timing
// target: any number of allocators, workloads, thread counts and blocks, with sample records
// shaped like `hsbench run`'s (argv, env, seeds, host, child measurement). Deterministic for
// a given FixtureSpec. Optionally an application run shaped like `hsbench app`'s.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace heapscope::site::testing {

struct FixtureSpec {
  std::size_t allocators = 3;  // taken from engine, mimalloc, jemalloc, tcmalloc, glibc, ...
  std::size_t workloads = 2;
  std::vector<unsigned> threads{1, 4};
  std::size_t blocks = 5;
  std::uint64_t seed = 42;
  std::string campaign = "fixture";
  std::string created = "2026-01-02T03:04:05Z";
  std::string engine_version = "0.1.0+abc1234";
  unsigned host_cpus = 2;    // threads above this are oversubscribed
  bool application = false;  // an `hsbench app` style run (workload app:<name>)
};

nlohmann::ordered_json fixture_raw_run(const FixtureSpec& spec);

}  // namespace heapscope::site::testing
