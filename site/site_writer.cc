#include "site_writer.h"

#include <unistd.h>

#include <set>

#include "embedded_files.h"
#include "history.h"
#include "html.h"
#include "manifest.h"
#include "schema_validation.h"
#include "site_files.h"
#include "site_verify.h"

namespace heapscope::site {
namespace {

namespace fs = std::filesystem;

// Removes a temporary path unless released.
class TempPath {
 public:
  explicit TempPath(fs::path p) : path_(std::move(p)) {}
  ~TempPath() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  void release() { path_.clear(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void require_replaceable(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec)) throw SiteError(dir.string() + ": exists and is not a directory");
  if (fs::is_empty(dir, ec)) return;
  if (!fs::exists(dir / kDigestFile, ec)) {
    throw SiteError(dir.string() + ": exists and is not a published site (no " + kDigestFile +
                    "); refusing to replace it");
  }
}

void write_site_files(const fs::path& dir, const std::vector<PublishedRun>& runs,
                      const Json& latest, const std::string& history_text, const SiteModel& model) {
  write_file(dir / "latest.json", latest.dump(1) + "\n");
  write_file(dir / "history.jsonl", history_text);
  for (const PublishedRun& r : runs) write_file(dir / r.copy_path, r.copy_text);
  for (const EmbeddedFile& f : embedded_files()) {
    write_file(dir / std::string(f.dest), std::string(f.text));
  }
  write_file(dir / kIndexPage, index_page(model));
  write_file(dir / kScalingPage, scaling_page(model));
  write_file(dir / kMemoryPage, memory_page(model));
  write_file(dir / kLatencyPage, latency_page(model));
  write_file(dir / kSuitePage, suite_page(model));
  write_file(dir / kProvenancePage, provenance_page(model));
  write_file(dir / kReproducePage, reproduce_page(model));
}

}  // namespace

PublishResult publish_site(const PublishRequest& req) {
  if (req.runs.empty()) throw SiteError("nothing to publish");
  const fs::path out = fs::absolute(req.out_dir).lexically_normal();
  require_replaceable(out);
  if (!req.history_path.empty()) {
    const fs::path history = fs::absolute(req.history_path).lexically_normal();
    if (history.string().rfind(out.string() + "/", 0) == 0) {
      throw SiteError(req.history_path + ": the history must live outside " + out.string() +
                      " (the site directory is replaced as a whole; its history.jsonl is a copy)");
    }
  }

  // Runs, their history rows, and the refusal of duplicates (in the history or in this call).
  History history = req.history_path.empty() ? History{} : load_history(req.history_path);
  std::vector<PublishedRun> runs;
  std::vector<Json> new_rows;
  std::set<std::string> ids;
  for (const RunInput& in : req.runs) {
    runs.push_back(publish_run(in));
    const std::string id = runs.back().entry["run_id"].get<std::string>();
    if (!ids.insert(id).second) throw SiteError(in.path + ": run " + id + " is given twice");
    if (!req.history_path.empty()) require_new_run(history, id, req.history_path);
    new_rows.push_back(history_row(runs.back().entry));
  }
  const Json latest = latest_envelope(runs);

  // Enforce the schemas on what we are about to publish.
  require_schema(latest, Schema::kLatest, "latest.json (as built)");
  for (const PublishedRun& r : runs) {
    require_schema(r.entry["summary"], Schema::kSummary,
                   "summary of " + r.entry["run_id"].get<std::string>());
  }
  for (const Json& row : new_rows)
    require_schema(row, Schema::kHistoryRow, "history row (as built)");
  const std::string history_text = append_rows(history, new_rows);

  SiteModel model;
  model.latest = latest;
  for (const RunInput& in : req.runs) model.raws.push_back(&in.raw);
  model.history = history.rows;
  model.history.insert(model.history.end(), new_rows.begin(), new_rows.end());

  // Build beside the destination so the final renames stay on one file system.
  const std::string suffix = ".publish-" + std::to_string(getpid());
  TempPath tmp(out.string() + suffix + ".tmp");
  std::error_code ec;
  fs::remove_all(tmp.path(), ec);
  fs::create_directories(tmp.path());
  write_site_files(tmp.path(), runs, latest, history_text, model);
  PublishResult result;
  result.manifest_sha256 = seal_site(tmp.path());
  const VerifyResult check = verify_site(tmp.path(), result.manifest_sha256);
  if (!check.ok) throw SiteError("internal: the site just built does not verify: " + check.problem);
  result.files = check.files + 2;
  for (const auto& entry : fs::recursive_directory_iterator(tmp.path())) {
    if (entry.is_regular_file()) result.bytes += entry.file_size();
  }
  for (const PublishedRun& r : runs) result.run_ids.push_back(r.entry["run_id"].get<std::string>());

  // The history's new bytes, staged before anything visible changes.
  std::optional<TempPath> history_tmp;
  if (!req.history_path.empty()) {
    history_tmp.emplace(req.history_path + suffix + ".tmp");
    write_file(history_tmp->path(), history_text);
  }
  // Swap the site in: old DIR aside, new DIR in place, old DIR removed.
  TempPath old(out.string() + suffix + ".old");
  if (fs::exists(out, ec)) fs::rename(out, old.path());
  try {
    fs::rename(tmp.path(), out);
  } catch (const fs::filesystem_error&) {
    if (fs::exists(old.path(), ec)) fs::rename(old.path(), out, ec);
    old.release();
    throw;
  }
  tmp.release();
  if (history_tmp) {
    fs::rename(history_tmp->path(), req.history_path);
    history_tmp->release();
  }
  return result;
}

}  // namespace heapscope::site
