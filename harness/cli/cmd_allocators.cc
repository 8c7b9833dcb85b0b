// `hsbench allocators`: the registry, as a table or as JSON.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "harness/cli/commands.h"
#include "harness/registry/allocator_json.h"
#include "harness/registry/allocator_registry.h"

namespace heapscope::harness {
namespace {

struct AllocatorsOptions {
  bool json = false;
  std::vector<std::string> user_allocators;
  std::vector<std::string> only;
};

// hsbench itself is the probe (`hsbench probe`), so availability needs no other binary.
ProbeCommand self_probe() {
  std::error_code ec;
  return {std::filesystem::canonical("/proc/self/exe", ec).string(), "probe"};
}

void print_table(const std::vector<AllocatorInfo>& infos) {
  std::printf("%-14s %-5s %-22s %-20s %-12s %s\n", "id", "avail", "package", "version", "sha256",
              "library / reason");
  for (const AllocatorInfo& a : infos) {
    const std::string pkg = a.package.empty() ? "-" : a.package;
    const std::string version = a.version.empty() ? "-" : a.version;
    const std::string digest = a.sha256.empty() ? "-" : a.sha256.substr(0, 12);
    const std::string where = a.available ? a.resolved_path : a.reason;
    std::printf("%-14s %-5s %-22s %-20s %-12s %s\n", a.spec.id.c_str(), a.available ? "yes" : "no",
                pkg.c_str(), version.c_str(), digest.c_str(), where.c_str());
    std::string enters = a.spec.preload ? "LD_PRELOAD" : "nothing (default allocator)";
    for (const auto& [key, value] : a.spec.env) enters += " + " + key + "=" + value;
    std::printf("%-14s       enters child by: %s\n", "", enters.c_str());
  }
}

int run_allocators(const AllocatorsOptions& options) {
  std::vector<AllocatorSpec> specs = registry_specs({engine_libraries(), options.user_allocators});
  if (!options.only.empty()) specs = select_allocators(specs, options.only);
  std::vector<AllocatorInfo> infos;
  infos.reserve(specs.size());
  for (const AllocatorSpec& spec : specs) infos.push_back(inspect_allocator(spec, self_probe()));
  if (options.json) {
    std::cout << registry_to_json(infos).dump(2) << "\n";
  } else {
    print_table(infos);
  }
  return kExitOk;
}

}  // namespace

void add_allocators_command(CLI::App& app, CommandAction& run) {
  auto options = std::make_shared<AllocatorsOptions>();
  CLI::App* cmd =
      app.add_subcommand("allocators",
                         "List the allocators under test: library, package version, SHA-256, "
                         "availability");
  cmd->add_flag("--json", options->json, "Print JSON instead of a table (default: a table)");
  cmd->add_option(
         "--allocator", options->user_allocators,
         "Add an allocator from a shared library (repeatable; default: only the built-in ones)")
      ->type_name("NAME=PATH");
  cmd->add_option("--only", options->only, "Only these allocator ids, in this order (default: all)")
      ->delimiter(',')
      ->type_name("ID,...");
  cmd->footer(help_footer({"hsbench allocators", "hsbench allocators --json --only engine,glibc",
                           "hsbench allocators --allocator mine=/opt/lib/libmine.so"}));
  cmd->final_callback([options, &run] { run = [options] { return run_allocators(*options); }; });
}

}  // namespace heapscope::harness
