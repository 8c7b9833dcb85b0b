// hs-probe: prints which shared object serves malloc/free/realloc/calloc in this process as
// one JSON line; with --expect PATH exits 3 when that is not PATH. Run it under the same
// LD_PRELOAD a campaign child would get to check an allocator really takes over.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

#include "probe/probe_report.h"

namespace {

int hs_probe_main(int argc, char** argv) {
  CLI::App app{"hs-probe: report which shared object serves malloc in this process"};
  app.name("hs-probe");
  std::string expect;
  app.add_option("--expect", expect, "Exit 3 unless malloc/free/realloc/calloc come from PATH")
      ->type_name("PATH");
  CLI11_PARSE(app, argc, argv);
  return heapscope::probe::report_identity(expect, std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return hs_probe_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "hs-probe: " << e.what() << "\n";
    return 1;
  }
}
