// latest.json ("heapscope.latest", schema_version 1; site/schemas/latest.schema.json): one
// entry per published raw run with its summary (harness/report/report.h, unchanged), the headline
// numbers, provenance (allocator versions, options and library SHA-256s; the raw run's
// SHA-256), machine, methodology, comparison key, and the metrics not collected yet. Also the
// copy of the raw run that ships in the site so every page's `hsbench reproduce` command works.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "site_json.h"

namespace heapscope::site {

inline constexpr const char* kLatestSchema = "heapscope.latest";
inline constexpr int kLatestSchemaVersion = 1;

// Raw runs up to this size ship whole; larger ones (a full headline campaign is ~8 MB) ship
// as a valid raw run holding only the samples the reproduce commands name, which keeps the
// site small (target < 5 MiB). The entry records which, and the original's SHA-256.
inline constexpr std::uint64_t kWholeRawCopyLimit = 1536 * 1024;

// One raw run as the publisher read it.
// clang-tidy: nlohmann's noexcept null constructor delegates to the value-kind constructor,
// which can throw only for kinds other than null.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct RunInput {
  std::string path;  // as given on the command line (for messages only)
  std::string text;  // the file's bytes
  std::string sha256;
  Json raw;      // schema-valid raw run
  Json summary;  // heapscope.campaign-summary from harness/report/report.h, unchanged
};

// NOLINTNEXTLINE(bugprone-exception-escape): as RunInput.
struct PublishedRun {
  Json entry;             // runs[i] of latest.json
  std::string copy_path;  // "raw/<run id>.json"
  std::string copy_text;  // what goes there
};

// "<campaign>-<created as yyyymmddThhmmssZ>-<seed hex>", or with the first 12 hex digits of
// the file's SHA-256 in place of the time when the run records no creation time.
std::string run_id(const Json& raw, const std::string& sha256);

PublishedRun publish_run(const RunInput& input);

// The geometric mean of an allocator's per-cell paired effects (cells with a finite effect):
// one headline number per allocator for the history.
Json headline_numbers(const Json& summary);

Json latest_envelope(const std::vector<PublishedRun>& runs);

}  // namespace heapscope::site
