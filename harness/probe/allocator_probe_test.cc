#include "allocator_probe.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "allocator_registry.h"
#include "run_command.h"

namespace heapscope::probe {
namespace {

using harness::AllocatorInfo;
using harness::CommandResult;

// ---- unit: pure functions and this process -----------------------------------------------

TEST(ProbeUnit, ObjectToRegistryId) {
  EXPECT_EQ(allocator_id_for_object("/usr/lib/x86_64-linux-gnu/libc.so.6"), "glibc");
  EXPECT_EQ(allocator_id_for_object("/usr/lib/x86_64-linux-gnu/libmimalloc.so.2.0"), "mimalloc");
  EXPECT_EQ(allocator_id_for_object("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"), "jemalloc");
  EXPECT_EQ(allocator_id_for_object("/x/libtcmalloc_minimal.so.4.5.10"), "tcmalloc");
  EXPECT_EQ(allocator_id_for_object("/build/engine/libheapscope.so"), "engine");
  EXPECT_EQ(allocator_id_for_object("/build/engine/libheapscope_noprof.so"), "engine-noprof");
  EXPECT_EQ(allocator_id_for_object("/opt/libfancy.so"), "libfancy.so");
  EXPECT_EQ(allocator_id_for_object("plain"), "plain");
}

TEST(ProbeUnit, ThisProcessIsConsistent) {
  const AllocatorIdentity id = identify_allocator();
  EXPECT_TRUE(id.consistent) << id.malloc_object << " " << id.free_object << " "
                             << id.realloc_object << " " << id.calloc_object;
  EXPECT_TRUE(std::filesystem::exists(id.malloc_object)) << id.malloc_object;
  std::string why;
  EXPECT_TRUE(matches_expected(id, id.malloc_object, &why)) << why;
}

TEST(ProbeUnit, MatchesBySymlinkAndNamesTheMismatch) {
  const std::string libc = harness::libc_path();
  const std::string real = std::filesystem::canonical(libc).string();
  const AllocatorIdentity id{real, real, real, real, true};
  std::string why;
  EXPECT_TRUE(matches_expected(id, libc, &why)) << why;  // libc path may be a symlinked dir

  AllocatorIdentity mixed = id;
  mixed.realloc_object = "/nonexistent/libother.so";
  EXPECT_FALSE(matches_expected(mixed, libc, &why));
  EXPECT_NE(why.find("realloc is served by /nonexistent/libother.so"), std::string::npos) << why;
}

// ---- integration: hs-probe children under LD_PRELOAD --------------------------------------

AllocatorInfo inspect(const std::string& id) {
  const auto specs = harness::registry_specs({harness::engine_libraries(), {}});
  return harness::inspect_allocator(harness::select_allocators(specs, {id}).at(0), {HS_PROBE_EXE});
}

// Runs hs-probe with the registry's environment for `info` and the given extra arguments.
CommandResult probe(const AllocatorInfo& info, const std::vector<std::string>& args) {
  std::vector<std::string> env = harness::environment_with("LD_PRELOAD", "");
  for (const std::string& kv : harness::child_environment(info)) env.push_back(kv);
  std::vector<std::string> argv{HS_PROBE_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  return harness::run_command(argv, &env);
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
  EXPECT_TRUE(harness::child_environment(inspect("glibc")).empty());
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
}  // namespace heapscope::probe
