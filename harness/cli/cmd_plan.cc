// `hsbench plan CAMPAIGN... --out DIR`: calibrate once, then one job file per block
// (block_jobs.h). Job files are named <campaign>-block-NNNN.json.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "harness/campaign/block_jobs.h"
#include "harness/campaign/campaign_exec.h"
#include "harness/campaign/campaign_setup.h"
#include "harness/campaign/raw_run_header.h"
#include "harness/cli/commands.h"

namespace heapscope::harness {
namespace {

struct PlanOptions {
  std::vector<std::string> campaigns;
  std::string out;
  std::vector<std::string> allocators;
  std::vector<std::string> user_allocators;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::uint64_t ops = 0;
  unsigned blocks = 0;
};

int run_plan(const PlanOptions& o) {
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) throw Failure("cannot create " + o.out + ": " + ec.message());
  for (const std::string& name : o.campaigns) {
    CampaignSpec spec = load_campaign(name);
    if (!o.allocators.empty()) spec.allocators = o.allocators;
    for (const auto& u : o.user_allocators) spec.user_allocators.push_back(u);
    if (o.seed_given) spec.seed = o.seed;
    if (o.ops > 0) spec.fixed_ops = o.ops;
    if (o.blocks > 0) spec.blocks = o.blocks;
    const ResolvedCampaign c = resolve_campaign(spec);
    Json planned = new_raw_run(c);
    RawRunWriter no_file("");
    if (!ensure_calibration(c, planned, no_file))
      throw Interrupted("interrupted while calibrating");
    ensure_orders(c, planned);
    const std::string stem = std::filesystem::path(name).stem().string();
    for (unsigned b = 0; b < c.spec.blocks; ++b) {
      char file[64];
      std::snprintf(file, sizeof file, "-block-%04u.json", b);
      const std::string path = (std::filesystem::path(o.out) / (stem + file)).string();
      write_json_atomic(path, block_job(planned, b));
      std::cout << path << "\n";
    }
    std::cerr << "hsbench plan: " << name << ": " << c.spec.blocks << " block jobs in " << o.out
              << " (seed " << hex64(c.seed) << ")\n";
  }
  return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, CommandAction& run) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Calibrate a campaign and write one job file per block (for run-block/merge)");
  cmd->add_option(
         "campaign", o->campaigns,
         "Campaigns: quick, quick-latency, headline, tax or a campaign FILE.json (one or more)")
      ->required();
  cmd->add_option("--out", o->out, "Directory for the job files, created when missing (required)")
      ->required();
  cmd->add_option("--allocators", o->allocators, "Allocator ids (default: the campaign's)")
      ->delimiter(',')
      ->type_name("ID,...");
  cmd->add_option("--allocator", o->user_allocators,
                  "Add an allocator from a shared library, measured even if --allocators omits it "
                  "(repeatable; default: none)")
      ->type_name("NAME=PATH");
  CLI::Option* seed =
      cmd->add_option("--seed", o->seed,
                      "Campaign seed, 64-bit (default: the campaign's, else fresh and recorded)");
  cmd->add_option("--ops", o->ops,
                  "Fixed operations per sample, skipping calibration (default: calibrated)");
  cmd->add_option("--blocks", o->blocks,
                  "Blocks per cell (default: the campaign's; quick 5, headline 20)");
  cmd->footer(help_footer({"hsbench plan quick --out jobs/",
                           "hsbench run-block jobs/quick-block-0000.json --out results/0000.json",
                           "hsbench merge results/*.json --out quick.raw.json"}));
  cmd->final_callback([o, seed, &run] {
    o->seed_given = seed->count() > 0;
    run = [o] { return run_plan(*o); };
  });
}

}  // namespace heapscope::harness
