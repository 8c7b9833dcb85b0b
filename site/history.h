// history.jsonl: one compact "heapscope.history-row" (schema_version 1) per published run,
// one per line, append-only. Publishing never rewrites an earlier row (the new file is the
// old bytes followed by the new lines) and refuses a run id that is already present.
// Rows of every comparison key are kept; the site's history chart joins rows sharing the
// current run's key, in file (= publication) order.
#pragma once

#include <string>
#include <vector>

#include "site_json.h"

namespace heapscope::site {

inline constexpr const char* kHistoryRowSchema = "heapscope.history-row";
inline constexpr int kHistoryRowSchemaVersion = 1;

struct History {
  std::string text;        // the file's bytes, kept verbatim
  std::vector<Json> rows;  // parsed and schema-checked
};

// A missing file is an empty history. Throws SiteError naming "<path>:<line>" for a line that
// is not JSON or not a valid row, and for a file not ending in a newline (a truncated write).
History load_history(const std::string& path);

// The row of one published run (latest.json's runs[i]).
Json history_row(const Json& run_entry);

// Throws SiteError when a row with this run id is already in the history.
void require_new_run(const History& history, const std::string& run_id, const std::string& path);

// The history after appending `rows`: history.text + one compact line per row.
std::string append_rows(const History& history, const std::vector<Json>& rows);

}  // namespace heapscope::site
