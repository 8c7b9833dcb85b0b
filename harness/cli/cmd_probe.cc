// `hsbench probe [--expect PATH]`: the ownership probe inside hsbench itself, so hsbench can
// check an allocator by re-running itself under LD_PRELOAD (see library_check.h) without
// needing to find hs-probe.
#include <dlfcn.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "harness/cli/commands.h"
#include "probe/probe_report.h"

namespace heapscope::harness {
namespace {

// hsbench never links the engine, so an hs_version found here is the preloaded library's.
int print_engine_version() {
  using VersionFn = int (*)();
  const auto fn = reinterpret_cast<VersionFn>(dlsym(RTLD_DEFAULT, "hs_version"));
  if (fn == nullptr) {
    std::cerr << "hsbench probe: no heapscope engine in this process\n";
    return 3;
  }
  const int v = fn();
  std::printf("%d.%d.%d\n", v / 10000, v / 100 % 100, v % 100);
  return kExitOk;
}

}  // namespace

void add_probe_command(CLI::App& app, CommandAction& run) {
  auto expect = std::make_shared<std::string>();
  auto engine_version = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "probe",
      "Print which shared object serves malloc/free/realloc/calloc in this process "
      "(run it under LD_PRELOAD)");
  cmd->add_option("--expect", *expect,
                  "Exit 3 unless malloc/free/realloc/calloc come from PATH (default: only print)")
      ->type_name("PATH");
  cmd->add_flag("--engine-version", *engine_version,
                "Print the version of the heapscope engine serving this process, as X.Y.Z; exit 3 "
                "when there is none (default: off)");
  cmd->footer(
      help_footer({"LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libheapscope.so.0 hsbench probe",
                   "LD_PRELOAD=./libmine.so hsbench probe --expect ./libmine.so",
                   "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libheapscope.so.0 hsbench probe "
                   "--engine-version"},
                  "  0  success, 3  PATH (--expect) does not serve malloc/free/realloc/calloc,\n"
                  "  or no heapscope engine is loaded (--engine-version), 2  usage error"));
  cmd->final_callback([expect, engine_version, &run] {
    run = [expect, engine_version] {
      if (*engine_version) return print_engine_version();
      return probe::report_identity(*expect, std::cout, std::cerr);
    };
  });
}

}  // namespace heapscope::harness
