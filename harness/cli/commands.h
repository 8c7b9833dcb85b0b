// The index of hsbench subcommands. Each lives in its own cmd_<name>.cc and registers itself
// on the app: it adds a subcommand with its options and sets `run` when it is chosen.
// A new subcommand = one new file + one line here + one line in hsbench_main.cc.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace heapscope::harness {

// The chosen subcommand's action; returns the process exit code.
using CommandAction = std::function<int()>;

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the command ran and found a problem
inline constexpr int kExitUsage = 2;    // bad arguments or an unknown name

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

}  // namespace heapscope::harness
