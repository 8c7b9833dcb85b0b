// `hsbench report RAW.json`: the per-cell table and the summary JSON (report.h).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "harness/campaign/campaign_spec.h"
#include "harness/campaign/raw_run.h"
#include "harness/cli/commands.h"
#include "harness/report/report.h"

namespace heapscope::harness {
namespace {

struct ReportOptions {
  std::string raw;
  std::string baseline;
  std::vector<std::string> pairs;
  std::string summary_out;
};

int run_report(const ReportOptions& o) {
  const Json raw = load_raw_run(o.raw);
  std::vector<ComparisonPair> pairs;
  for (const std::string& p : o.pairs) pairs.push_back(parse_pair(p));
  const Json summary = summarize_raw_run(raw, o.baseline, pairs);
  print_report(std::cout, summary);
  if (!o.summary_out.empty()) write_json_atomic(o.summary_out, summary);
  return kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, CommandAction& run) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Per-cell medians, IQR and paired effects with bootstrap CIs from a raw run");
  cmd->add_option("raw", o->raw, "Raw-run JSON from hsbench run, merge or app")->required();
  cmd->add_option("--baseline", o->baseline, "Baseline allocator id (default: the run's)");
  cmd->add_option("--pair", o->pairs,
                  "CANDIDATE:REFERENCE, a paired effect besides the baseline's, e.g. "
                  "engine-prof:engine (repeatable; default: the run's campaign's pairs)");
  cmd->add_option("--summary-out", o->summary_out,
                  "Also write the summary JSON to this file (default: none)");
  cmd->footer(
      help_footer({"hsbench report hsbench-quick.raw.json",
                   "hsbench report run.raw.json --baseline glibc --summary-out summary.json",
                   "hsbench report tax.raw.json --pair engine-prof:engine"},
                  "  0  success, 1  the raw run cannot be read or summarized, 2  usage error"));
  cmd->final_callback([o, &run] { run = [o] { return run_report(*o); }; });
}

}  // namespace heapscope::harness
