#include "history.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json_depth.h"
#include "schema_validation.h"

namespace heapscope::site {

History load_history(const std::string& path) {
  History h;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return h;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SiteError(path + ": cannot read the history: " + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  h.text = buffer.str();
  if (!h.text.empty() && h.text.back() != '\n') {
    throw SiteError(path + ": the last line has no newline (truncated history?)");
  }
  std::size_t line_no = 0, begin = 0;
  while (begin < h.text.size()) {
    const std::size_t end = h.text.find('\n', begin);
    const std::string line = h.text.substr(begin, end - begin);
    begin = end + 1;
    const std::string where = path + ":" + std::to_string(++line_no);
    if (base::json_nesting_depth(line) > base::kMaxJsonNesting) {
      throw SiteError(where + ": nested deeper than " + std::to_string(base::kMaxJsonNesting) +
                      " levels");
    }
    Json row;
    try {
      row = Json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw SiteError(where + ": not valid JSON (" + e.what() + ")");
    }
    require_schema(row, Schema::kHistoryRow, where);
    h.rows.push_back(std::move(row));
  }
  return h;
}

namespace {

// row[key]["median"] when it is a number, else null (application summaries have other rows).
Json median_of(const Json& row, const char* key) {
  if (!row.contains(key) || !row[key].is_object() || !row[key].contains("median")) return Json();
  const Json& m = row[key]["median"];
  return m.is_number() ? m : Json();
}

}  // namespace

Json history_row(const Json& run) {
  Json cells = Json::array();
  for (const Json& cell : run["summary"]["cells"]) {
    for (const Json& row : cell["allocators"]) {
      const Json& e = row["effect_vs_baseline"];
      const bool has = e.is_object();
      cells.push_back(Json::array({cell["workload"], cell["threads"], row["allocator"],
                                   median_of(row, "ops_per_sec"), has ? e["effect"] : Json(),
                                   has ? e["ci_low"] : Json(), has ? e["ci_high"] : Json(),
                                   median_of(row, "peak_rss_bytes")}));
    }
  }
  return Json{{"schema", kHistoryRowSchema}, {"schema_version", kHistoryRowSchemaVersion},
              {"run_id", run["run_id"]},     {"comparison_key", run["comparison_key"]["digest"]},
              {"campaign", run["campaign"]}, {"created", run["created"]},
              {"series", run["series"]},     {"seed", run["seed"]},
              {"baseline", run["baseline"]}, {"raw_sha256", run["raw"]["source_sha256"]},
              {"headline", run["headline"]}, {"cells", cells}};
}

void require_new_run(const History& history, const std::string& run_id, const std::string& path) {
  for (const Json& row : history.rows) {
    if (row["run_id"] == run_id) {
      throw SiteError(path + ": run " + run_id +
                      " is already in the history (history rows are never rewritten)");
    }
  }
}

std::string append_rows(const History& history, const std::vector<Json>& rows) {
  std::string text = history.text;
  for (const Json& row : rows) text += row.dump() + "\n";
  return text;
}

}  // namespace heapscope::site
