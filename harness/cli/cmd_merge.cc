// `hsbench merge RESULT... --out RAW.json`: block results joined into one raw run.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "harness/campaign/block_jobs.h"
#include "harness/cli/commands.h"

namespace heapscope::harness {
namespace {

struct MergeOptions {
  std::vector<std::string> results;
  std::string out;
};

int run_merge(const MergeOptions& o) {
  std::vector<Json> results;
  for (const std::string& path : o.results) results.push_back(load_raw_run(path));
  const Json merged = merge_results(results, o.results);
  write_json_atomic(o.out, merged);
  std::cerr << "hsbench merge: " << results.size() << " results, " << merged["samples"].size()
            << " samples -> " << o.out << (merged["complete"] == true ? "" : " (incomplete)")
            << "\n";
  return kExitOk;
}

}  // namespace

void add_merge_command(CLI::App& app, CommandAction& run) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* cmd = app.add_subcommand("merge", "Join run-block results into one raw run");
  cmd->add_option("results", o->results, "Result files from hsbench run-block (one or more)")
      ->required();
  cmd->add_option("--out", o->out, "Merged raw-run JSON to write (required)")->required();
  cmd->footer(help_footer(
      {"hsbench merge results/*.json --out quick.raw.json", "hsbench report quick.raw.json"}));
  cmd->final_callback([o, &run] { run = [o] { return run_merge(*o); }; });
}

}  // namespace heapscope::harness
