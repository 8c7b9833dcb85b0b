// `hsbench run-block JOB.json --out RESULT.json`: the samples of one planned block, on this
// host. Re-running with the same --out continues a partial result (like run --resume).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "harness/campaign/campaign_exec.h"
#include "harness/campaign/campaign_setup.h"
#include "harness/cli/commands.h"
#include "harness/registry/host_info.h"

namespace heapscope::harness {
namespace {

struct RunBlockOptions {
  std::string job;
  std::string out;
};

int run_block(const RunBlockOptions& o) {
  std::error_code ec;
  const bool partial = std::filesystem::exists(o.out, ec);
  Json raw = load_raw_run(partial ? o.out : o.job);
  if (!raw.contains("job")) throw RawRunError((partial ? o.out : o.job) + ": not a block job");
  const ResolvedCampaign c = resolve_campaign(campaign_from_json(raw["campaign"]));
  check_same_campaign(raw, c, o.job);
  if (!partial) raw["hosts"] = Json::array({host_info()});
  RawRunWriter writer(o.out);
  const ExecuteResult r = execute_samples(c, raw, writer);
  std::cerr << "hsbench run-block: block " << raw["job"]["block"] << ": " << r.ran
            << " samples run, " << r.failed << " failed -> " << o.out << "\n";
  if (r.interrupted) throw Interrupted();
  return kExitOk;
}

}  // namespace

void add_run_block_command(CLI::App& app, CommandAction& run) {
  auto o = std::make_shared<RunBlockOptions>();
  CLI::App* cmd = app.add_subcommand("run-block", "Run one planned block job on this host");
  cmd->add_option("job", o->job, "Job file from hsbench plan")->required();
  cmd->add_option("--out", o->out,
                  "Result JSON to write, a raw run of this block; an existing partial one is "
                  "continued (required)")
      ->required();
  cmd->footer(
      help_footer({"hsbench run-block jobs/quick-block-0003.json --out results/0003.json"}));
  cmd->final_callback([o, &run] { run = [o] { return run_block(*o); }; });
}

}  // namespace heapscope::harness
