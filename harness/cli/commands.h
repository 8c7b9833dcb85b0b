// The index of hsbench subcommands. Each lives in its own cmd_<name>.cc and registers itself
// on the app: it adds a subcommand with its options and sets `run` when it is chosen.
// A new subcommand = one new file + one line here + one line in hsbench_main.cc.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>

#include "harness/cli/errors.h"

namespace CLI {
class App;
}

namespace heapscope::harness {

// The chosen subcommand's action; returns the process exit code. Errors are thrown
// (errors.h); the libraries' own errors map to exit codes in one place, hsbench_main.cc:
// CampaignError and RegistryError are usage errors, RawRunError a failure.
using CommandAction = std::function<int()>;

// The exit codes of errors.h as the help pages describe them; a subcommand whose codes mean
// more (e.g. probe's 3) passes its own text.
inline constexpr const char* kExitStatusHelp =
    "  0  success, 1  the command ran and found a problem, 2  usage error (bad option,\n"
    "  unknown name), 130  interrupted (SIGINT/SIGTERM)";

// The end of every subcommand's --help, which is also its section of the man page (help2man
// turns "Examples:" and "Exit status:" into sections).
inline std::string help_footer(std::initializer_list<const char*> examples,
                               const char* exit_status = kExitStatusHelp) {
  std::string text = "Examples:\n";
  for (const char* e : examples) text += std::string("  ") + e + "\n";
  return text + "\nExit status:\n" + exit_status;
}

void add_allocators_command(CLI::App& app, CommandAction& run);  // cmd_allocators.cc
void add_probe_command(CLI::App& app, CommandAction& run);       // cmd_probe.cc
void add_run_command(CLI::App& app, CommandAction& run);         // cmd_run.cc
void add_report_command(CLI::App& app, CommandAction& run);      // cmd_report.cc
void add_reproduce_command(CLI::App& app, CommandAction& run);   // cmd_reproduce.cc
void add_plan_command(CLI::App& app, CommandAction& run);        // cmd_plan.cc
void add_run_block_command(CLI::App& app, CommandAction& run);   // cmd_run_block.cc
void add_merge_command(CLI::App& app, CommandAction& run);       // cmd_merge.cc
void add_publish_command(CLI::App& app, CommandAction& run);     // cmd_publish.cc
void add_verify_command(CLI::App& app, CommandAction& run);      // cmd_verify.cc
void add_app_command(CLI::App& app, CommandAction& run);         // cmd_app.cc
void add_suite_command(CLI::App& app, CommandAction& run);       // cmd_suite.cc

}  // namespace heapscope::harness
