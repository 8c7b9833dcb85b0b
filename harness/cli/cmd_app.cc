// `hsbench app [options] -- CMD ARGS...`: does switching allocators help this program?
// The preload probe first (app_probe.h), then balanced paired blocks of the command under every
// selected allocator (app_campaign.h), a raw run, and the table (app_report.h).
// Exit: 0 ok (failed samples are data), 1 the probe found the comparison meaningless (the
// explanation is printed; --force runs it anyway) or the raw run cannot be written, 2 usage,
// 130 interrupted.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "harness/app/app_campaign.h"
#include "harness/app/app_sample_runner.h"
#include "harness/campaign/output_lock.h"
#include "harness/campaign/raw_run_header.h"
#include "harness/cli/commands.h"
#include "harness/report/app_report.h"

namespace heapscope::harness {
namespace {

struct AppOptions {
  AppSpec spec;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::string out;
};

// hsbench-app-<name>-<UTC time>.raw.json: a fresh name, so no earlier run is overwritten.
std::string default_out(const AppSpec& spec) {
  std::string stamp = utc_now();
  std::erase_if(stamp, [](char ch) { return ch == '-' || ch == ':'; });
  return "hsbench-app-" + std::filesystem::path(spec.command.at(0)).filename().string() + "-" +
         stamp + ".raw.json";
}

int run_app(AppOptions& o) {
  if (o.seed_given) o.spec.seed = o.seed;
  // The output first: a folder that cannot be written, or another hsbench writing the same
  // raw run, is reported before the probe runs the command under every allocator.
  const std::string out = o.out.empty() ? default_out(o.spec) : o.out;
  const OutputLock lock(out);  // one writer per raw run
  const AppCampaign c = prepare_app_campaign(o.spec);
  if (app_interrupt_requested()) throw Interrupted("interrupted while probing; nothing was run");
  Json raw = new_app_raw_run(c);
  RawRunWriter writer(out);
  if (c.probe.blocked && !c.spec.force) {
    raw["complete"] = true;  // nothing is to be run: the probe's findings are the result
    writer.save(raw);
    std::cout << "hsbench app: no allocator comparison for " << c.executable << ":\n";
    for (const std::string& p : c.probe.problems) std::cout << "  " << p << "\n";
    std::cout << "(probe findings recorded in " << out << "; pass --force to measure anyway)\n";
    return kExitFailure;
  }
  if (c.probe.blocked) {
    std::cerr << "hsbench app: --force: measuring although the probe found the comparison "
                 "meaningless\n";
  }
  std::cerr << "hsbench app: " << c.workload << ", seed " << hex64(c.seed) << ", "
            << c.active.size() << " allocators x " << c.spec.blocks << " blocks (+" << c.spec.warmup
            << " warmup each), baseline " << c.baseline << " -> " << out << "\n";
  writer.save(raw);
  const AppExecResult r = run_app_campaign(c, raw, writer);
  std::cerr << "hsbench app: " << r.ran << " samples run, " << r.failed << " failed; recorded in "
            << out << "\n";
  if (r.interrupted) throw Interrupted("interrupted; the samples so far are in " + out);
  print_app_report(std::cout, summarize_app_run(raw, ""));
  return kExitOk;
}

}  // namespace

void add_app_command(CLI::App& app, CommandAction& run) {
  auto o = std::make_shared<AppOptions>();
  CLI::App* cmd = app.add_subcommand(
      "app", "Compare allocators on your own program: hsbench app [options] -- CMD ARGS...");
  AppSpec& s = o->spec;
  cmd->add_option("--allocators", s.allocators, "Allocator ids (default: every available one)")
      ->delimiter(',')
      ->type_name("ID,...");
  cmd->add_option("--allocator", s.user_allocators,
                  "Add an allocator from a shared library, measured even if --allocators omits it "
                  "(repeatable; default: none)")
      ->type_name("NAME=PATH");
  cmd->add_option("--blocks", s.blocks, "Paired blocks (one run per allocator each; count)")
      ->capture_default_str();
  cmd->add_option("--warmup", s.warmup, "Unrecorded runs per allocator before the blocks (count)")
      ->capture_default_str();
  cmd->add_option("--timeout", s.timeout_seconds,
                  "Watchdog per run, in seconds (kills the process group)")
      ->capture_default_str();
  cmd->add_option("--cwd", s.cwd, "Run the command in this directory (default: the current one)");
  cmd->add_option("--stdin", s.stdin_path,
                  "Feed this file to the command's stdin (default "
                  "/dev/null)");
  cmd->add_option("--env", s.extra_env,
                  "Add KEY=VALUE to the command's environment (repeatable; default: none)")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--same-output", s.same_output,
                "Require identical stdout (SHA-256) in every sample; a differing one is a failure "
                "(default: off)");
  cmd->add_option("--baseline", s.baseline, "Baseline allocator id (default: glibc)");
  CLI::Option* seed = cmd->add_option(
      "--seed", o->seed, "Seed of the block orders, 64-bit (default: fresh, recorded in the run)");
  cmd->add_flag("--force", s.force,
                "Measure even when the probe finds the comparison meaningless (default: off)");
  cmd->add_option("--out", o->out,
                  "Raw-run JSON to write (default: hsbench-app-<name>-<UTC time>.raw.json)");
  cmd->add_option("command", s.command, "The command and its arguments, after --")->required();
  cmd->footer(help_footer(
      {"hsbench app -- gzip -9 -k big.tar",
       "hsbench app --allocators glibc,engine --blocks 20 -- ./server --selftest",
       "hsbench app --same-output --stdin input.txt -- sort -n"},
      "  0  success (failed samples are data), 1  the probe found the comparison meaningless\n"
      "  (see --force) or the raw run cannot be written, 2  usage error, 130  interrupted"));
  cmd->final_callback([o, seed, &run] {
    o->seed_given = seed->count() > 0;
    run = [o] { return run_app(*o); };
  });
}

}  // namespace heapscope::harness
