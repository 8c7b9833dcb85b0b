// `hsbench publish RAW... --out DIR [--history FILE] [--baseline ID]`: checks each raw run
// against site/schemas/raw-run.schema.json, summarizes it with report.h (and
// app_report.h for application runs, through summarize_raw_run), and writes the sealed static site
// (site/site_writer.h). Any refusal names the file and leaves DIR and FILE untouched.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "base/json_depth.h"
#include "base/sha256.h"
#include "harness/cli/commands.h"
#include "harness/report/report.h"
#include "site/schema_validation.h"
#include "site/site_files.h"
#include "site/site_writer.h"

namespace heapscope::harness {
namespace {

struct PublishOptions {
  std::vector<std::string> raws;
  std::string out;
  std::string history;
  std::string baseline;
};

site::RunInput load_run(const std::string& path, const std::string& baseline) {
  site::RunInput in;
  in.path = path;
  in.text = site::read_file(path);
  if (base::json_nesting_depth(in.text) > base::kMaxJsonNesting) {
    throw site::SiteError(path + ": nested deeper than " + std::to_string(base::kMaxJsonNesting) +
                          " levels");
  }
  nlohmann::json plain;
  try {
    plain = nlohmann::json::parse(in.text);
  } catch (const nlohmann::json::exception& e) {
    throw site::SiteError(path + ": not valid JSON (" + e.what() + ")");
  }
  site::require_schema(plain, site::Schema::kRawRun, path);
  if (plain["samples"].empty()) {
    throw site::SiteError(path +
                          ": has no samples (a plan or an unstarted run?): nothing to publish");
  }
  in.raw = Json(plain);  // a conversion costs a third of a second parse (7.5 MB: 0.05 s)
  in.sha256 = base::sha256_hex(in.text);
  try {
    in.summary = summarize_raw_run(in.raw, baseline);
  } catch (const RawRunError& e) {
    throw site::SiteError(path + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw site::SiteError(path + ": cannot summarize (" + e.what() + ")");
  }
  return in;
}

int run_publish(const PublishOptions& o) {
  try {
    site::PublishRequest req;
    for (const std::string& path : o.raws) req.runs.push_back(load_run(path, o.baseline));
    req.out_dir = o.out;
    req.history_path = o.history;
    const site::PublishResult r = site::publish_site(req);
    std::cout << "hsbench publish: " << r.run_ids.size() << " run(s), " << r.files << " files, "
              << r.bytes << " bytes\n";
    for (const std::string& id : r.run_ids) std::cout << "  run " << id << "\n";
    if (!o.history.empty()) {
      std::cout << "  history: appended " << r.run_ids.size() << " row(s) to " << o.history << "\n";
    }
    std::cout << "  manifest sha256 " << r.manifest_sha256 << " (hsbench verify " << o.out
              << " --digest " << r.manifest_sha256 << ")\n"
              << "site: " << o.out << "/index.html\n";
  } catch (const site::SiteError& e) {
    throw Failure(std::string(e.what()) + "\nhsbench publish: nothing was written");
  } catch (const std::filesystem::filesystem_error& e) {
    throw Failure(e.what());
  }
  return kExitOk;
}

}  // namespace

void add_publish_command(CLI::App& app, CommandAction& run) {
  auto o = std::make_shared<PublishOptions>();
  CLI::App* cmd = app.add_subcommand(
      "publish", "Write the sealed static site (latest.json, history, charts) for raw runs");
  cmd->add_option("raw", o->raws, "Raw-run JSON files (one or more)")->required();
  cmd->add_option("--out", o->out, "Site directory, replaced as a whole (required)")->required();
  cmd->add_option("--history", o->history,
                  "Append-only history.jsonl to extend, created when missing (default: none)");
  cmd->add_option("--baseline", o->baseline, "Baseline allocator id (default: each run's)");
  cmd->footer(help_footer(
      {"hsbench publish quick.raw.json --out site/ --history history.jsonl",
       "hsbench verify site/ --digest <sha256 printed by publish>"},
      "  0  success, 1  a raw run is invalid or the site cannot be written (nothing is written),\n"
      "  2  usage error"));
  cmd->final_callback([o, &run] { run = [o] { return run_publish(*o); }; });
}

}  // namespace heapscope::harness
