// hsbench: one binary, one subcommand per cmd_<name>.cc (see commands.h).
#include <CLI/CLI.hpp>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "harness/campaign/campaign_spec.h"
#include "harness/campaign/output_lock.h"
#include "harness/campaign/raw_run.h"
#include "harness/cli/commands.h"
#include "harness/cli/errors.h"
#include "harness/process/run_command.h"
#include "harness/registry/allocator_registry.h"
#include "harness/registry/engine_libraries.h"
#include "hsbench_version.h"  // generated: HS_HSBENCH_VERSION, HS_HSBENCH_COMMIT

namespace {

// A first word that is not an option must name a subcommand. Checked before parsing because
// CLI11 would only say "A subcommand is required", which hides the misspelt word.
bool is_unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == argv[1]) return false;
  }
  std::cerr << "hsbench: unknown subcommand '" << argv[1] << "'; known subcommands:";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    std::cerr << " " << sub->get_name();
  }
  std::cerr << "\nRun 'hsbench --help' for usage.\n";
  return true;
}

// One engine library as --version shows it: its path and the version it reports when
// preloaded into `hsbench probe` (the library cannot be dlopen'ed: initial-exec TLS).
std::string engine_line(const char* id, const std::string& library) {
  using namespace heapscope::harness;
  std::string line = std::string(id) + " " + (library.empty() ? "(none)" : library) + ": ";
  if (library.empty()) return line + "not found";
  std::error_code ec;
  const std::string self = std::filesystem::canonical("/proc/self/exe", ec).string();
  const std::vector<std::string> env = environment_with("LD_PRELOAD", library);
  const CommandResult r = run_command({self, "probe", "--engine-version"}, &env, 10000);
  if (!r.ok()) return line + "not loadable";
  std::string version = r.out;
  while (!version.empty() && version.back() == '\n') version.pop_back();
  return line + "heapscope " + version;
}

// GNU style: the first line names the program and its version (help2man reads it).
std::string version_text() {
  const heapscope::harness::EngineLibraries engine = heapscope::harness::engine_libraries();
  return std::string("hsbench ") + HS_HSBENCH_VERSION + "\ncommit " + HS_HSBENCH_COMMIT +
         "\nengines it loads (HEAPSCOPE_ENGINE_LIB, HEAPSCOPE_ENGINE_NOPROF_LIB override):\n  " +
         engine_line("engine", engine.prof) + "\n  " + engine_line("engine-noprof", engine.noprof);
}

// The one place a subcommand's error becomes a message and an exit code. Called from a catch
// block: rethrows the error in flight to tell its kind.
int report_error(const std::string& who) {
  using namespace heapscope::harness;
  const auto say = [&who](const char* what) {
    if (*what != '\0') std::cerr << who << ": " << what << "\n";
  };
  try {
    throw;
  } catch (const CommandError& e) {
    say(e.what());
    return e.exit_code();
  } catch (const CampaignError& e) {
    say(e.what());
    return kExitUsage;
  } catch (const RegistryError& e) {
    say(e.what());
    return kExitUsage;
  } catch (const RawRunError& e) {
    say(e.what());
    return kExitFailure;
  } catch (const OutputLockError& e) {
    say(e.what());
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "hsbench: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}

int hsbench_main(int argc, char** argv) {
  using namespace heapscope::harness;
  CLI::App app{"hsbench: benchmark campaigns for heapscope and its peer allocators"};
  app.name("hsbench");
  app.require_subcommand(1);
  // Unknown words are errors, not silently ignored positionals.
  app.allow_extras(false);
  app.set_version_flag("--version", version_text, "Print the version of hsbench and its engines");
  app.set_help_all_flag("--help-all", "Print the help of every subcommand");
  app.footer(heapscope::harness::help_footer({"hsbench allocators", "hsbench run --campaign quick",
                                              "hsbench report hsbench-quick.raw.json",
                                              "hsbench app -- CMD ARGS...",
                                              "hsbench <subcommand> --help"}));

  CommandAction run;
  add_allocators_command(app, run);
  add_probe_command(app, run);
  add_run_command(app, run);
  add_report_command(app, run);
  add_reproduce_command(app, run);
  add_plan_command(app, run);
  add_run_block_command(app, run);
  add_merge_command(app, run);
  add_publish_command(app, run);
  add_verify_command(app, run);
  add_app_command(app, run);
  add_suite_command(app, run);

  if (is_unknown_subcommand(app, argc, argv)) return kExitUsage;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (!run) return kExitUsage;
  try {
    return run();
  } catch (...) {
    const std::vector<CLI::App*> chosen = app.get_subcommands();
    return report_error(chosen.empty() ? "hsbench" : "hsbench " + chosen[0]->get_name());
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return hsbench_main(argc, argv);
  } catch (const std::exception& e) {
    // Errors of a subcommand are reported by hsbench_main; this is the last line of defence.
    std::cerr << "hsbench: internal error: " << e.what() << "\n";
    return heapscope::harness::kExitFailure;
  }
}
