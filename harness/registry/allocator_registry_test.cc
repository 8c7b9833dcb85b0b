#include "harness/registry/allocator_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/process/run_command.h"
#include "harness/registry/allocator_json.h"

namespace heapscope::harness {
namespace {

const EngineLibraries kMissingEngine{"/nonexistent/libheapscope.so",
                                     "/nonexistent/libheapscope_noprof.so", "0.0.0"};

AllocatorInfo inspect_id(const std::string& id,
                         const RegistryOptions& options = {kMissingEngine, {}}) {
  return inspect_allocator(select_allocators(registry_specs(options), {id}).at(0), {HS_PROBE_EXE});
}

bool is_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

TEST(AllocatorRegistry, SpecOrderAndIds) {
  std::vector<std::string> ids;
  for (const AllocatorSpec& s : registry_specs({kMissingEngine, {}})) ids.push_back(s.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"engine", "engine-noprof", "engine-prof", "mimalloc",
                                           "jemalloc", "tcmalloc", "jemalloc-prof", "tcmalloc-full",
                                           "tcmalloc-prof", "glibc"}));
  // "Every allocator" leaves out the profiler-tax rows, which run only when named.
  ids.clear();
  for (const AllocatorSpec& s : default_allocators(registry_specs({kMissingEngine, {}}))) {
    ids.push_back(s.id);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"engine", "engine-noprof", "engine-prof", "mimalloc",
                                           "jemalloc", "tcmalloc", "glibc"}));
}

// The other profilers' rows: the library of their profiler-off twin, with the sampler set by
// its own variable at 512 KiB, and each probed like any allocator (so a jemalloc built without
// profiling, which refuses prof:true, would show here).
TEST(AllocatorRegistry, ProfilerTaxRowsSetTheirSamplers) {
  const std::map<std::string, std::string> variables = {
      {"jemalloc-prof", "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:19"},
      {"tcmalloc-full", "TCMALLOC_SAMPLE_PARAMETER=0"},
      {"tcmalloc-prof", "TCMALLOC_SAMPLE_PARAMETER=524288"}};
  for (const auto& [id, variable] : variables) {
    SCOPED_TRACE(id);
    const AllocatorInfo info = inspect_id(id);
    EXPECT_TRUE(info.available) << info.reason;
    const std::vector<std::string> env = child_environment(info);
    EXPECT_NE(std::find(env.begin(), env.end(), variable), env.end());
    EXPECT_NE(std::find(env.begin(), env.end(), "LD_PRELOAD=" + info.resolved_path), env.end());
  }
  EXPECT_EQ(inspect_id("tcmalloc-prof").package, "libgoogle-perftools4");
}

TEST(AllocatorRegistry, SystemAllocatorsAvailableWithProvenance) {
  const std::map<std::string, std::string> packages = {{"mimalloc", "libmimalloc2.0"},
                                                       {"jemalloc", "libjemalloc2"},
                                                       {"tcmalloc", "libtcmalloc-minimal4"},
                                                       {"glibc", "libc6"}};
  for (const auto& [id, package] : packages) {
    SCOPED_TRACE(id);
    const AllocatorInfo info = inspect_id(id);
    EXPECT_TRUE(info.available) << info.reason;
    EXPECT_EQ(info.package, package);
    EXPECT_FALSE(info.version.empty());
    ASSERT_TRUE(is_hex64(info.sha256)) << info.sha256;
    const CommandResult sum = run_command({"sha256sum", info.resolved_path});
    ASSERT_TRUE(sum.ok()) << sum.error << sum.err;
    EXPECT_EQ(info.sha256, sum.out.substr(0, 64));
  }
}

TEST(AllocatorRegistry, HowEachEntersTheChild) {
  const AllocatorInfo glibc = inspect_id("glibc");
  EXPECT_TRUE(child_environment(glibc).empty());
  EXPECT_NE(glibc.resolved_path.find("libc.so.6"), std::string::npos);

  const AllocatorInfo mimalloc = inspect_id("mimalloc");
  EXPECT_EQ(child_environment(mimalloc),
            std::vector<std::string>{"LD_PRELOAD=" + mimalloc.resolved_path});

  const AllocatorInfo prof = inspect_id("engine-prof");
  std::vector<std::string> env = child_environment(prof);
  EXPECT_NE(std::find(env.begin(), env.end(), "HEAPSCOPE_PROF=1"), env.end());

  // The subsystems default to off, and a row's own setting (engine-prof's =1) stays.
  engine_subsystems_off_unless_set(env);
  EXPECT_NE(std::find(env.begin(), env.end(), "HEAPSCOPE_PROF=1"), env.end());
  EXPECT_EQ(std::find(env.begin(), env.end(), "HEAPSCOPE_PROF=0"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "HEAPSCOPE_MEMORY_EVENTS=0"), env.end());
  std::vector<std::string> plain;
  engine_subsystems_off_unless_set(plain);
  EXPECT_EQ(plain, (std::vector<std::string>{"HEAPSCOPE_PROF=0", "HEAPSCOPE_MEMORY_EVENTS=0"}));
}

TEST(AllocatorRegistry, UnbuiltEngineIsUnavailableWithReason) {
  for (const char* id : {"engine", "engine-noprof", "engine-prof"}) {
    const AllocatorInfo info = inspect_id(id);
    EXPECT_FALSE(info.available);
    EXPECT_EQ(info.reason.rfind("not built: /nonexistent/libheapscope", 0), 0u) << info.reason;
  }
}

TEST(AllocatorRegistry, ProfilerRowIsTheEngineLibraryWithTheProfilerStarted) {
  // Point the engine at a library that exists, so nothing but the spec decides the row.
  const RegistryOptions present{
      {"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "0.0.0"}, {}};
  const AllocatorInfo prof = inspect_id("engine-prof", present);
  const AllocatorInfo engine = inspect_id("engine", present);
  EXPECT_TRUE(prof.spec.unavailable_reason.empty()) << "the profiler exists: no declared refusal";
  EXPECT_EQ(prof.spec.library, engine.spec.library);
  EXPECT_EQ(prof.sha256, engine.sha256);
  EXPECT_FALSE(prof.sha256.empty()) << "provenance is recorded";
  bool started = false;
  for (const auto& [key, value] : prof.spec.env) {
    started = started || (key == "HEAPSCOPE_PROF" && value == "1");
  }
  EXPECT_TRUE(started) << "engine-prof must start the profiler in the child";
  for (const auto& [key, value] : engine.spec.env) EXPECT_NE(key, "HEAPSCOPE_PROF");
}

TEST(AllocatorRegistry, UnknownIdNamesItAndTheKnownOnes) {
  try {
    inspect_id("foo");
    FAIL() << "expected RegistryError";
  } catch (const RegistryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'foo'"), std::string::npos) << what;
    EXPECT_NE(what.find("mimalloc"), std::string::npos) << what;
    EXPECT_NE(what.find("glibc"), std::string::npos) << what;
  }
}

TEST(AllocatorRegistry, UserAllocatorByPath) {
  const std::string mimalloc = inspect_id("mimalloc").spec.library;
  const AllocatorInfo info = inspect_id("mine", {kMissingEngine, {"mine=" + mimalloc}});
  EXPECT_TRUE(info.available) << info.reason;
  EXPECT_EQ(info.package, "libmimalloc2.0");
  EXPECT_EQ(info.sha256, inspect_id("mimalloc").sha256);
}

// A library given with --allocator NAME=PATH is measured even when --allocators omits it.
TEST(AllocatorRegistry, UserAllocatorsJoinAnExplicitList) {
  const std::string mimalloc = inspect_id("mimalloc").spec.library;
  const auto specs = registry_specs({kMissingEngine, {"mine=" + mimalloc, "other=" + mimalloc}});
  std::vector<std::string> added;
  EXPECT_EQ(with_user_allocators({"glibc", "other"}, specs, &added),
            (std::vector<std::string>{"glibc", "other", "mine"}));
  EXPECT_EQ(added, (std::vector<std::string>{"mine"}));
  added.clear();
  EXPECT_TRUE(with_user_allocators({}, specs, &added).empty()) << "empty already means all";
  EXPECT_TRUE(added.empty());
  EXPECT_EQ(with_user_allocators({"glibc"}, registry_specs({kMissingEngine, {}}), &added),
            (std::vector<std::string>{"glibc"}));
}

TEST(AllocatorRegistry, UserAllocatorErrors) {
  const std::string mimalloc = inspect_id("mimalloc").spec.library;
  EXPECT_THROW(registry_specs({kMissingEngine, {"mine=/nonexistent/libmine.so"}}), RegistryError);
  EXPECT_THROW(registry_specs({kMissingEngine, {"no-equals-sign"}}), RegistryError);
  EXPECT_THROW(registry_specs({kMissingEngine, {"=" + mimalloc}}), RegistryError);
  EXPECT_THROW(registry_specs({kMissingEngine, {"bad/name=" + mimalloc}}), RegistryError);
  EXPECT_THROW(registry_specs({kMissingEngine, {"glibc=" + mimalloc}}), RegistryError);
}

TEST(AllocatorRegistry, LibraryWithoutMallocIsUnavailable) {
  const std::string libm = inspect_id("glibc").spec.library;
  const std::string path = libm.substr(0, libm.rfind('/')) + "/libm.so.6";
  const AllocatorInfo info = inspect_id("libm", {kMissingEngine, {"libm=" + path}});
  EXPECT_FALSE(info.available);
  EXPECT_EQ(info.reason.rfind("does not serve malloc in the child", 0), 0u) << info.reason;
}

TEST(AllocatorRegistry, JsonRoundTrips) {
  std::vector<AllocatorInfo> infos;
  for (const AllocatorSpec& s : registry_specs({kMissingEngine, {}})) {
    infos.push_back(inspect_allocator(s, {HS_PROBE_EXE}));
  }
  const nlohmann::json j = nlohmann::json::parse(registry_to_json(infos).dump());
  EXPECT_EQ(j.at("schema"), "heapscope.allocators");
  EXPECT_EQ(j.at("schema_version"), kAllocatorsSchemaVersion);
  ASSERT_EQ(j.at("allocators").size(), infos.size());
  const nlohmann::json& engine = j.at("allocators").at(0);
  EXPECT_EQ(engine.at("id"), "engine");
  EXPECT_FALSE(engine.at("available").get<bool>());
  EXPECT_TRUE(engine.contains("reason"));
  const nlohmann::json& glibc = j.at("allocators").back();
  EXPECT_EQ(glibc.at("id"), "glibc");
  EXPECT_TRUE(glibc.at("ld_preload").is_null());
  EXPECT_EQ(j.at("allocators").at(2).at("env").at("HEAPSCOPE_PROF"), "1");
}

}  // namespace
}  // namespace heapscope::harness
