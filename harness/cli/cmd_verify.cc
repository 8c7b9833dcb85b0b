// `hsbench verify DIR [--digest HEX|FILE]`: re-checks a published site (site/site_verify.h)
// and names the first problem. --digest pins the manifest digest publish printed, kept
// outside the site, which also catches a site re-sealed consistently by someone else.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "harness/cli/commands.h"
#include "site/site_files.h"
#include "site/site_json.h"
#include "site/site_verify.h"

namespace heapscope::harness {
namespace {

struct VerifyOptions {
  std::string dir;
  std::string digest;
};

int run_verify(const VerifyOptions& o) {
  std::optional<std::string> expected;
  if (!o.digest.empty()) {
    std::error_code ec;
    // A file (e.g. a kept copy of manifest.json.sha256) or the hex digest itself.
    expected = std::filesystem::is_regular_file(o.digest, ec)
                   ? site::read_file(o.digest).substr(0, 64)
                   : o.digest;
  }
  const site::VerifyResult r = site::verify_site(o.dir, expected);
  if (!r.ok) throw Failure(o.dir + ": " + r.problem);
  std::cout << "hsbench verify: " << o.dir << ": ok: " << r.files
            << " files match manifest.json (sha256 " << r.manifest_sha256 << "); schemas valid\n";
  return kExitOk;
}

}  // namespace

void add_verify_command(CLI::App& app, CommandAction& run) {
  auto o = std::make_shared<VerifyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "Re-check a published site: manifest digest, every file's SHA-256, schemas");
  cmd->add_option("dir", o->dir, "Site directory written by hsbench publish")->required();
  cmd->add_option("--digest", o->digest,
                  "Expected manifest SHA-256 (hex, or a file holding it) kept outside the site "
                  "(default: not pinned)");
  cmd->footer(help_footer(
      {"hsbench verify site/", "hsbench verify site/ --digest kept/manifest.json.sha256"},
      "  0  the site is intact, 1  the first problem found is printed, 2  usage error"));
  cmd->final_callback([o, &run] { run = [o] { return run_verify(*o); }; });
}

}  // namespace heapscope::harness
