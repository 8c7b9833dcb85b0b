// The ownership probe (probe/) under the allocator registry's preload environments: hs-probe
// children name the allocator each registry entry really loads, and refuse a mismatch.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/process/run_command.h"
#include "harness/registry/allocator_registry.h"

namespace heapscope::harness {
namespace {

AllocatorInfo inspect(const std::string& id) {
  const auto specs = registry_specs({engine_libraries(), {}});
  return inspect_allocator(select_allocators(specs, {id}).at(0), {HS_PROBE_EXE});
}

// Runs hs-probe with the registry's environment for `info` and the given extra arguments.
CommandResult probe(const AllocatorInfo& info, const std::vector<std::string>& args) {
  std::vector<std::string> env = environment_with("LD_PRELOAD", "");
  for (const std::string& kv : child_environment(info)) env.push_back(kv);
  std::vector<std::string> argv{HS_PROBE_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, &env);
}

void expect_probe_names(const std::string& id) {
  const AllocatorInfo info = inspect(id);
  ASSERT_TRUE(info.available) << id << ": " << info.reason;
  const CommandResult r = probe(info, {"--expect", info.resolved_path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("allocator"), id) << r.out;
  EXPECT_EQ(j.at("malloc"), info.resolved_path) << r.out;
  EXPECT_TRUE(j.at("consistent").get<bool>()) << r.out;
}

TEST(ProbeUnderPreload, Mimalloc) { expect_probe_names("mimalloc"); }
TEST(ProbeUnderPreload, Jemalloc) { expect_probe_names("jemalloc"); }
TEST(ProbeUnderPreload, Tcmalloc) { expect_probe_names("tcmalloc"); }
TEST(ProbeUnderPreload, GlibcWithNoPreload) {
  expect_probe_names("glibc");
  EXPECT_TRUE(child_environment(inspect("glibc")).empty());
}

void expect_engine(const std::string& id) {
  const AllocatorInfo info = inspect(id);
  if (!info.available) GTEST_SKIP() << info.reason;
  expect_probe_names(id == "engine-prof" ? "engine" : id);
}
TEST(ProbeUnderPreload, EngineWhenBuilt) { expect_engine("engine"); }
TEST(ProbeUnderPreload, EngineNoprofWhenBuilt) { expect_engine("engine-noprof"); }

TEST(ProbeUnderPreload, MismatchedPreloadIsRefused) {
  const AllocatorInfo jemalloc = inspect("jemalloc");
  const AllocatorInfo mimalloc = inspect("mimalloc");
  const CommandResult r = probe(jemalloc, {"--expect", mimalloc.resolved_path});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("allocator mismatch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(jemalloc.resolved_path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(mimalloc.resolved_path), std::string::npos) << r.err;
}

TEST(ProbeUnderPreload, GlibcExpectedButPreloaded) {
  const CommandResult r = probe(inspect("tcmalloc"), {"--expect", inspect("glibc").resolved_path});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
}

TEST(ProbeUnderPreload, ExpectMissingFileIsAnError) {
  const CommandResult r = probe(inspect("glibc"), {"--expect", "/nonexistent/lib.so"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/lib.so"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace heapscope::harness
