// The table of harness/docs/protocol.md#allocators. System allocators are looked up by soname in
// the directory the running libc.so.6 comes from, so the multiarch triplet is never hard-coded.
#include <dlfcn.h>
#include <link.h>

#include <filesystem>

#include "harness/registry/allocator_registry.h"

namespace heapscope::harness {

std::string libc_path() {
  void* handle = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  link_map* map = nullptr;
  std::string path;
  if (handle != nullptr && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr) {
    path = map->l_name;
  }
  if (handle != nullptr) dlclose(handle);
  return path.empty() ? "/lib/x86_64-linux-gnu/libc.so.6" : path;
}

std::vector<AllocatorSpec> builtin_allocator_specs(const EngineLibraries& engine) {
  const std::string libc = libc_path();
  const std::string dir = std::filesystem::path(libc).parent_path().string() + "/";
  auto system = [&](std::string id, std::string what, const std::string& soname,
                    const std::string& package) {
    AllocatorSpec spec;
    spec.id = std::move(id);
    spec.description = std::move(what);
    spec.library = dir + soname;
    spec.missing_reason = "file missing (install " + package + ")";
    return spec;
  };
  auto ours = [&](std::string id, std::string what, const std::string& library) {
    AllocatorSpec spec;
    spec.id = std::move(id);
    spec.description = std::move(what);
    spec.library = library;
    spec.version_source = VersionSource::kBuildTree;
    spec.build_version = engine.version;
    spec.missing_reason = "not built";
    return spec;
  };

  std::vector<AllocatorSpec> specs;
  specs.push_back(ours("engine", "heapscope, profiler compiled in, not running", engine.prof));
  specs.push_back(ours("engine-noprof", "heapscope, profiler compiled out", engine.noprof));
  specs.push_back(
      ours("engine-prof", "heapscope, profiler running (default interval)", engine.prof));
  // The same library as `engine`, with the sampled profiler started at process start-up
  // (default 512 KiB interval): the row that measures the running profiler's cost.
  specs.back().env.emplace_back("HEAPSCOPE_PROF", "1");
  specs.push_back(
      system("mimalloc", "upstream mimalloc (Debian)", "libmimalloc.so.2", "libmimalloc2.0"));
  specs.push_back(system("jemalloc", "jemalloc (Debian)", "libjemalloc.so.2", "libjemalloc2"));
  specs.push_back(system("tcmalloc", "gperftools tcmalloc minimal (Debian)",
                         "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"));
  // The other profilers' tax (the `tax` campaign pairs each with its profiler-off twin), run
  // only when named: jemalloc with its heap profiler sampling every 2^19 B (512 KiB) on average,
  // like engine-prof; gperftools' full tcmalloc (the minimal one has no sampler) with its
  // sampler off and at 512 KiB.
  specs.push_back(system("jemalloc-prof", "jemalloc (Debian), heap profiler on, 512 KiB samples",
                         "libjemalloc.so.2", "libjemalloc2"));
  specs.back().env.emplace_back("MALLOC_CONF", "prof:true,prof_active:true,lg_prof_sample:19");
  specs.back().opt_in = true;
  specs.push_back(system("tcmalloc-full", "gperftools tcmalloc (Debian), sampler off",
                         "libtcmalloc.so.4", "libgoogle-perftools4"));
  specs.back().env.emplace_back("TCMALLOC_SAMPLE_PARAMETER", "0");
  specs.back().opt_in = true;
  specs.push_back(system("tcmalloc-prof", "gperftools tcmalloc (Debian), sampler at 512 KiB",
                         "libtcmalloc.so.4", "libgoogle-perftools4"));
  specs.back().env.emplace_back("TCMALLOC_SAMPLE_PARAMETER", "524288");
  specs.back().opt_in = true;
  AllocatorSpec glibc = system("glibc", "the system allocator", "libc.so.6", "libc6");
  glibc.library = libc;
  glibc.preload = false;
  specs.push_back(glibc);
  return specs;
}

}  // namespace heapscope::harness
