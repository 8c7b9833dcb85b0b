// `hsbench probe [--expect PATH]`: the ownership probe inside hsbench itself, so hsbench can
// check an allocator by re-running itself under LD_PRELOAD (see library_check.h) without
// needing to find hs-probe.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

#include "harness/cli/commands.h"
#include "probe/probe_report.h"

namespace heapscope::harness {

void add_probe_command(CLI::App& app, CommandAction& run) {
  auto expect = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "probe",
      "Print which shared object serves malloc/free/realloc/calloc in this process "
      "(run it under LD_PRELOAD)");
  cmd->add_option("--expect", *expect, "Exit 3 unless malloc/free/realloc/calloc come from PATH")
      ->type_name("PATH");
  cmd->final_callback([expect, &run] {
    run = [expect] { return probe::report_identity(*expect, std::cout, std::cerr); };
  });
}

}  // namespace heapscope::harness
