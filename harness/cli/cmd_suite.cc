// `hsbench suite [NAME|FILE]`: every case of a suite of real programs under every allocator
// (harness/suite/suite_campaign.h, harness/docs/suite.md), a raw run, and the table with the
// per-case effects and the geometric mean (report/suite_report.h). Resumable like `hsbench run`.
// Exit: 0 ok (failed samples and failed cases are data), 1 no case could be measured or the raw
// run cannot be written, 2 usage (bad suite file, unknown case), 130 interrupted.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "harness/app/app_sample_runner.h"
#include "harness/campaign/output_lock.h"
#include "harness/campaign/raw_run_header.h"
#include "harness/cli/commands.h"
#include "harness/report/suite_report.h"
#include "harness/suite/suite_campaign.h"

namespace heapscope::harness {
namespace {

struct SuiteCliOptions {
  SuiteOptions suite;
  std::uint64_t seed = 0;
  std::uint64_t input_seed = 0;
  unsigned warmup = 0;
  std::string out;
  bool resume = false;
  bool shaped = false;
};

std::string default_out(const SuiteCliOptions& o) {
  const std::string stem = std::filesystem::path(o.suite.suite).filename().string();
  return "hsbench-suite-" + stem.substr(0, stem.find('.')) + (o.suite.quick ? "-quick" : "") +
         ".raw.json";
}

std::string work_dir_for(const std::string& out) {
  std::string stem = out;
  if (stem.ends_with(".raw.json")) stem.resize(stem.size() - 9);
  return stem + ".work";
}

int run_suite_command(SuiteCliOptions& o) {
  const std::string out = o.out.empty() ? default_out(o) : o.out;
  const OutputLock lock(out);  // one writer per raw run
  std::error_code ec;
  const bool exists = std::filesystem::exists(out, ec);
  Json raw;
  SuiteCampaign c;
  if (o.resume && exists) {
    if (o.shaped) {
      throw UsageError("--resume takes the suite from " + out +
                       "; do not combine it with options that change it");
    }
    try {
      raw = load_raw_run(out);
      if (!is_suite_run(raw)) throw RawRunError(out + " is not a suite run");
      c = resume_suite(raw, o.suite.user_allocators);
      add_this_host(raw);
    } catch (const RawRunError& e) {
      throw Failure(std::string("cannot resume: ") + e.what() + " (file left unchanged)");
    }
    std::cerr << "hsbench suite: resuming " << out << " (" << raw["samples"].size()
              << " samples recorded)\n";
  } else {
    if (exists) {
      throw Failure(out + " exists; pass --resume to continue it, or choose another --out");
    }
    if (o.suite.work_dir.empty()) o.suite.work_dir = work_dir_for(out);
    c = prepare_suite(o.suite, raw);
    if (app_interrupt_requested())
      throw Interrupted("interrupted while preparing; nothing was run");
  }
  RawRunWriter writer(out);
  writer.save(raw);
  std::size_t measured = 0;
  for (const SuiteCaseState& s : c.cases) measured += s.status == "ok" ? 1 : 0;
  std::cerr << "hsbench suite: " << c.spec.name << ", seed " << hex64(c.seed) << ", input seed "
            << c.input_seed << ", " << measured << " of " << c.cases.size() << " cases x "
            << c.blocks << " blocks, baseline " << c.baseline << " -> " << out << "\n";
  if (measured == 0) {
    raw["complete"] = true;
    writer.save(raw);
    for (const SuiteCaseState& s : c.cases) {
      std::cout << "case " << c.case_of(s).name << " " << s.status << ": " << s.reason << "\n";
    }
    throw Failure("no case of the suite could be measured (recorded in " + out + ")");
  }
  const ExecuteResult r = run_suite(c, raw, writer);
  std::cerr << "hsbench suite: " << r.ran << " samples run, " << r.failed << " failed; recorded in "
            << out << "\n";
  if (r.interrupted) {
    throw Interrupted("interrupted; the samples so far are in " + out + " (--resume continues)");
  }
  print_suite_report(std::cout, summarize_suite_run(raw, ""));
  return kExitOk;
}

}  // namespace

void add_suite_command(CLI::App& app, CommandAction& run) {
  auto o = std::make_shared<SuiteCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "suite", "Compare allocators on a suite of real programs: hsbench suite [NAME|FILE]");
  SuiteOptions& s = o->suite;
  s.suite = "debian";
  cmd->add_option("suite", s.suite, "Built-in suite name or suite file (harness/docs/suite.md)")
      ->capture_default_str();
  CLI::Option* allocs =
      cmd->add_option("--allocators", s.allocators, "Allocator ids (default: every available one)")
          ->delimiter(',')
          ->type_name("ID,...");
  cmd->add_option("--allocator", s.user_allocators,
                  "Add an allocator from a shared library (repeatable; default: none)")
      ->type_name("NAME=PATH");
  CLI::Option* cases =
      cmd->add_option("--cases", s.cases, "Only these cases (default: all, or the quick ones)")
          ->delimiter(',')
          ->type_name("NAME,...");
  CLI::Option* blocks = cmd->add_option(
      "--blocks", s.blocks, "Paired blocks per case (default: the suite's; --quick: its quick)");
  CLI::Option* warmup = cmd->add_option(
      "--warmup", o->warmup, "Unrecorded runs per case and allocator (default: the suite's)");
  CLI::Option* quick = cmd->add_flag(
      "--quick", s.quick, "The suite's quick selection: its quick cases and block count (tests)");
  CLI::Option* seed = cmd->add_option(
      "--seed", o->seed, "Seed of the block orders, 64-bit (default: fresh, recorded)");
  CLI::Option* input_seed = cmd->add_option(
      "--input-seed", o->input_seed, "Seed the inputs are generated from (default: the suite's)");
  CLI::Option* baseline =
      cmd->add_option("--baseline", s.baseline, "Baseline allocator id (default: the suite's)");
  CLI::Option* work = cmd->add_option("--work-dir", s.work_dir,
                                      "Where inputs are generated (default: <out stem>.work)");
  cmd->add_option("--out", o->out,
                  "Raw-run JSON to write (default: hsbench-suite-<name>[-quick].raw.json)");
  cmd->add_flag("--resume", o->resume,
                "Continue the raw run at --out (its suite, seeds and probe verdicts)");
  cmd->footer(help_footer(
      {"hsbench suite debian", "hsbench suite --quick --allocators glibc,engine",
       "hsbench suite my.suite.json --cases lua,sqlite --blocks 20",
       "hsbench suite --resume --out hsbench-suite-debian.raw.json"},
      "  0  success (failed samples and cases are data), 1  no case could be measured or the\n"
      "  raw run cannot be written, 2  usage error, 130  interrupted (--resume continues)"));
  cmd->final_callback(
      [o, allocs, cases, blocks, warmup, quick, seed, input_seed, baseline, work, cmd, &run] {
        if (seed->count() > 0) o->suite.seed = o->seed;
        if (input_seed->count() > 0) o->suite.input_seed = o->input_seed;
        if (warmup->count() > 0) o->suite.warmup = o->warmup;
        o->shaped = allocs->count() + cases->count() + blocks->count() + warmup->count() +
                        quick->count() + seed->count() + input_seed->count() + baseline->count() +
                        work->count() + cmd->get_option("suite")->count() >
                    0;
        run = [o] { return run_suite_command(*o); };
      });
}

}  // namespace heapscope::harness
