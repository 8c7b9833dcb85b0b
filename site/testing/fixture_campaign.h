// Synthetic raw runs ("heapscope.raw-run" v1, or v4 with the protocols) for the site tests and the
// publish timing target: any number of allocators, workloads, thread counts and blocks, with sample
// records shaped like `hsbench run`'s (argv, env, seeds, host, child measurement). Deterministic
// for a given FixtureSpec. Optionally an application run shaped like `hsbench app`'s. Both
// documents are site-level types (site/schemas), so the site's tests need nothing above the site:
// fixture_summary stands in for the harness's report of a raw run.
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
  // A campaign run of schema version 4 with the memory protocol (timelines, return points at
  // +0.1/+1/+5 s), latency percentiles in every measurement, and one pair besides the
  // baseline's (the second allocator against the third, when there are three).
  bool protocols = false;
};

nlohmann::ordered_json fixture_raw_run(const FixtureSpec& spec);

// A "heapscope.campaign-summary" v1 of a campaign (not application) raw run, as the site reads
// it: per cell the baseline first, medians and quartiles of ops/s over the ok samples, paired
// effects with bootstrap CIs (stats/), failed samples counted and listed.
nlohmann::ordered_json fixture_summary(const nlohmann::ordered_json& raw);

}  // namespace heapscope::site::testing
