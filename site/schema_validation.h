// JSON Schema validation (draft 7, valijson) against the schemas compiled into the library.
// Publish validates every input and every file it writes; verify re-validates the site.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "site_json.h"

namespace heapscope::site {

enum class Schema { kRawRun, kSummary, kLatest, kHistoryRow, kManifest };

// "raw-run", "summary", ...: the file name stem under site/schemas/.
std::string_view schema_name(Schema schema);

// The schema text as shipped in the repository.
std::string_view schema_text(Schema schema);

// Violations as "<json path>: <what>", at most `limit`; empty when the document is valid.
std::vector<std::string> schema_violations(const nlohmann::json& document, Schema schema,
                                           std::size_t limit = 5);
std::vector<std::string> schema_violations(const Json& document, Schema schema,
                                           std::size_t limit = 5);

// Throws SiteError "<what>: does not match <name>.schema.json: <first violations>".
void require_schema(const nlohmann::json& document, Schema schema, const std::string& what);
void require_schema(const Json& document, Schema schema, const std::string& what);

}  // namespace heapscope::site
