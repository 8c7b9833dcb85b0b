// `hsbench run`: a whole campaign on this host (harness/docs/protocol.md#campaigns), resumable.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "harness/campaign/campaign_exec.h"
#include "harness/campaign/campaign_setup.h"
#include "harness/campaign/output_lock.h"
#include "harness/campaign/raw_run_header.h"
#include "harness/cli/commands.h"
#include "harness/report/report.h"

namespace heapscope::harness {
namespace {

struct RunOptions {
  std::string campaign = "quick";
  std::vector<std::string> allocators;
  std::vector<std::string> user_allocators;
  std::vector<std::string> workloads;
  std::vector<unsigned> threads;
  unsigned blocks = 0;
  std::uint64_t seed = 0;
  std::uint64_t ops = 0;
  double timeout = 0;
  std::vector<double> return_points;
  bool latency = false;
  double latency_rate = 0;
  double latency_load = 0;
  std::string baseline;
  std::vector<std::string> pairs;
  std::string out;
  bool resume = false;
  bool seed_given = false;
  bool shaped = false;  // any option that changes the campaign
};

CampaignSpec campaign_from_options(const RunOptions& o) {
  CampaignSpec spec = load_campaign(o.campaign);
  if (!o.allocators.empty()) spec.allocators = o.allocators;
  for (const auto& u : o.user_allocators) spec.user_allocators.push_back(u);
  if (!o.workloads.empty()) spec.workloads = o.workloads;
  if (!o.threads.empty()) spec.threads = o.threads;
  if (o.blocks > 0) spec.blocks = o.blocks;
  if (o.seed_given) spec.seed = o.seed;
  if (o.ops > 0) spec.fixed_ops = o.ops;
  if (o.timeout > 0) spec.timeout_seconds = o.timeout;
  if (!o.return_points.empty()) spec.return_points_seconds = o.return_points;
  if (!o.baseline.empty()) spec.baseline = o.baseline;
  if (!o.pairs.empty()) {
    spec.pairs.clear();
    for (const std::string& p : o.pairs) spec.pairs.push_back(parse_pair(p));
  }
  if (o.latency || o.latency_rate > 0 || o.latency_load > 0) spec.latency = true;
  if (o.latency_rate > 0) spec.latency_rate = o.latency_rate;
  if (o.latency_load > 0) spec.latency_load = o.latency_load;
  validate_campaign(spec);
  return spec;
}

int run_campaign(const RunOptions& o) {
  const std::string out =
      o.out.empty() ? "hsbench-" + std::filesystem::path(o.campaign).stem().string() + ".raw.json"
                    : o.out;
  // Before looking at the file: a second run or resume of the same output is refused.
  const OutputLock lock(out);
  std::error_code ec;
  const bool exists = std::filesystem::exists(out, ec);
  Json raw;
  ResolvedCampaign c;
  if (o.resume && exists) {
    if (o.shaped) {
      throw UsageError("--resume takes the campaign from " + out +
                       "; do not combine it with options that change the campaign");
    }
    try {
      raw = load_raw_run(out);
      c = resolve_campaign(campaign_from_json(raw["campaign"]));
      check_same_campaign(raw, c, out);
      add_this_host(raw);
      std::cerr << "hsbench run: resuming " << out << " (" << raw["samples"].size()
                << " samples recorded)\n";
    } catch (const RawRunError& e) {
      throw Failure(std::string("cannot resume: ") + e.what() + " (file left unchanged)");
    }
  } else {
    if (exists) {
      throw Failure(out + " exists; pass --resume to continue it, or choose another --out");
    }
    c = resolve_campaign(campaign_from_options(o));
    raw = new_raw_run(c);
  }
  std::cerr << "hsbench run: campaign " << c.spec.name << ", seed " << hex64(c.seed) << ", "
            << c.spec.workloads.size() << " workloads x " << c.spec.threads.size()
            << " thread points x " << c.active.size() << " allocators x " << c.spec.blocks
            << " blocks, baseline " << c.baseline << " -> " << out << "\n";

  RawRunWriter writer(out);
  writer.save(raw);
  if (!ensure_calibration(c, raw, writer)) {
    throw Interrupted("interrupted while calibrating; continue with: hsbench run --resume --out " +
                      out);
  }
  ensure_orders(c, raw);
  const ExecuteResult r = execute_samples(c, raw, writer);
  std::cerr << "hsbench run: " << r.ran << " samples run, " << r.failed << " failed; "
            << raw["samples"].size() << " recorded in " << out << "\n";
  if (r.interrupted) {
    throw Interrupted("interrupted; continue with: hsbench run --resume --out " + out);
  }
  print_report(std::cout, summarize_raw_run(raw, ""));
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, CommandAction& run) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run a campaign: workloads x thread points x allocators x balanced paired blocks");
  std::vector<CLI::Option*> shaping;
  cmd->add_option("--campaign", o->campaign,
                  "Campaign: quick, quick-latency, headline, tax or a campaign FILE.json")
      ->capture_default_str();
  shaping.push_back(
      cmd->add_option("--allocators", o->allocators,
                      "Allocator ids (default: the campaign's; quick and headline: all)")
          ->delimiter(',')
          ->type_name("ID,..."));
  shaping.push_back(
      cmd->add_option(
             "--allocator", o->user_allocators,
             "Add an allocator from a shared library, measured even if --allocators omits it "
             "(repeatable; default: none)")
          ->type_name("NAME=PATH"));
  shaping.push_back(
      cmd->add_option("--workloads", o->workloads, "Workload names (default: the campaign's)")
          ->delimiter(',')
          ->type_name("W,..."));
  shaping.push_back(
      cmd->add_option("--threads", o->threads, "Thread counts (default: the campaign's; quick 1,2)")
          ->delimiter(',')
          ->type_name("N,..."));
  shaping.push_back(cmd->add_option(
      "--blocks", o->blocks, "Blocks per cell (default: the campaign's; quick 5, headline 20)"));
  CLI::Option* seed = cmd->add_option(
      "--seed", o->seed, "Campaign seed, 64-bit (default: fresh, recorded in the run)");
  shaping.push_back(seed);
  shaping.push_back(cmd->add_option(
      "--ops", o->ops, "Fixed operations per sample, skipping calibration (default: calibrated)"));
  shaping.push_back(cmd->add_option(
      "--timeout", o->timeout, "Watchdog per child, in seconds (default: the campaign's, 60)"));
  shaping.push_back(cmd->add_option("--return-points", o->return_points,
                                    "Seconds after the drain at which the child's RSS is read "
                                    "again (default: the campaign's; quick 0.1, headline 0.1,1,5)")
                        ->delimiter(',')
                        ->type_name("S,..."));
  shaping.push_back(cmd->add_flag("--latency", o->latency,
                                  "Open-loop per-operation latency percentiles; samples are paced "
                                  "by a fixed schedule (harness/docs/protocol.md#latency; default: "
                                  "off, throughput only)"));
  shaping.push_back(cmd->add_option("--latency-rate", o->latency_rate,
                                    "Schedule rate in stream ops/s for a whole cell; implies "
                                    "--latency (default: --latency-load x calibrated capacity)"));
  shaping.push_back(cmd->add_option("--latency-load", o->latency_load,
                                    "Schedule rate as a fraction of the baseline's capacity "
                                    "measured in calibration; implies --latency (default: 0.5)"));
  shaping.push_back(
      cmd->add_option("--baseline", o->baseline,
                      "Calibration and report baseline id (default: mimalloc, else glibc)"));
  shaping.push_back(cmd->add_option(
      "--pair", o->pairs,
      "CANDIDATE:REFERENCE, a paired effect the report gives besides the baseline's, e.g. "
      "engine-prof:engine (repeatable; default: the campaign's, tax has four)"));
  cmd->add_option("--out", o->out, "Raw-run JSON to write (default: hsbench-<campaign>.raw.json)");
  cmd->add_flag("--resume", o->resume,
                "Continue the raw run in --out with its missing samples (default: off)");
  cmd->footer(help_footer({"hsbench run", "hsbench run --campaign headline --out headline.raw.json",
                           "hsbench run --allocators engine,glibc --threads 1,4 --blocks 10",
                           "hsbench run --resume --out headline.raw.json"}));
  CLI::Option* campaign_opt = cmd->get_option("--campaign");
  cmd->final_callback([o, shaping, seed, campaign_opt, &run] {
    o->seed_given = seed->count() > 0;
    o->shaped = campaign_opt->count() > 0;
    for (CLI::Option* opt : shaping) o->shaped |= opt->count() > 0;
    run = [o] { return run_campaign(*o); };
  });
}

}  // namespace heapscope::harness
