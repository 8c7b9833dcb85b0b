// hs-site-fixture: writes a synthetic raw run (fixture_campaign.h) for the site tests and for
// timing `hsbench publish`, e.g. the full-size target:
//   hs-site-fixture --allocators 7 --workloads 10 --threads 1,2,4,8 --blocks 20 --out raw.json
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "site/testing/fixture_campaign.h"

int main(int argc, char** argv) {
  heapscope::site::testing::FixtureSpec spec;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--application") {
      spec.application = true;
      continue;
    }
    if (arg == "--protocols") {
      spec.protocols = true;
      continue;
    }
    if (value == nullptr) {
      std::fprintf(stderr, "hs-site-fixture: %s needs a value\n", arg.c_str());
      return 2;
    }
    ++i;
    if (arg == "--allocators")
      spec.allocators = std::strtoul(value, nullptr, 10);
    else if (arg == "--workloads")
      spec.workloads = std::strtoul(value, nullptr, 10);
    else if (arg == "--blocks")
      spec.blocks = std::strtoul(value, nullptr, 10);
    else if (arg == "--seed")
      spec.seed = std::strtoull(value, nullptr, 10);
    else if (arg == "--campaign")
      spec.campaign = value;
    else if (arg == "--created")
      spec.created = value;
    else if (arg == "--engine-version")
      spec.engine_version = value;
    else if (arg == "--out")
      out = value;
    else if (arg == "--threads") {
      spec.threads.clear();
      std::stringstream list(value);
      for (std::string t; std::getline(list, t, ',');) spec.threads.push_back(std::stoul(t));
    } else {
      std::fprintf(stderr, "hs-site-fixture: unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  if (out.empty() || spec.allocators < 1 || spec.allocators > 8) {
    std::fprintf(stderr,
                 "usage: hs-site-fixture --out FILE [--allocators 1..8] [--workloads N] "
                 "[--threads 1,2] [--blocks N] [--seed S] [--campaign NAME] "
                 "[--created TIME] [--engine-version V] [--application] [--protocols]\n");
    return 2;
  }
  std::ofstream(out) << heapscope::site::testing::fixture_raw_run(spec).dump(1) << '\n';
  return 0;
}
