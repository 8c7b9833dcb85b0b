#include "schema_validation.h"

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "embedded_files.h"

namespace heapscope::site {
namespace {

constexpr std::array<std::string_view, 5> kNames = {"raw-run", "summary", "latest", "history-row",
                                                    "manifest"};

// Parsed once per process: parsing a schema costs more than validating a history row.
const valijson::Schema& parsed_schema(Schema schema) {
  static std::mutex mutex;
  static std::map<Schema, std::unique_ptr<valijson::Schema>> cache;
  std::lock_guard lock(mutex);
  auto& slot = cache[schema];
  if (!slot) {
    const nlohmann::json doc = nlohmann::json::parse(schema_text(schema));
    slot = std::make_unique<valijson::Schema>();
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(doc);
    parser.populateSchema(adapter, *slot);
  }
  return *slot;
}

std::string join_path(const std::vector<std::string>& context) {
  std::string path;
  for (const std::string& part : context) path += part;
  return path.empty() ? "<root>" : path;
}

}  // namespace

std::string_view schema_name(Schema schema) { return kNames[static_cast<std::size_t>(schema)]; }

std::string_view schema_text(Schema schema) {
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.name == schema_name(schema)) return f.text;
  }
  throw SiteError("internal: schema '" + std::string(schema_name(schema)) + "' not embedded");
}

std::vector<std::string> schema_violations(const nlohmann::json& document, Schema schema,
                                           std::size_t limit) {
  valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(document);
  std::vector<std::string> out;
  if (validator.validate(parsed_schema(schema), target, &results)) return out;
  // valijson reports the enclosing failures too ("failed to validate item #3"); the deepest,
  // most specific ones are the useful ones, and they come first within each branch.
  valijson::ValidationResults::Error error;
  while (out.size() < limit && results.popError(error)) {
    out.push_back(join_path(error.context) + ": " + error.description);
  }
  return out;
}

std::vector<std::string> schema_violations(const Json& document, Schema schema, std::size_t limit) {
  return schema_violations(nlohmann::json(document), schema, limit);
}

void require_schema(const nlohmann::json& document, Schema schema, const std::string& what) {
  const auto problems = schema_violations(document, schema);
  if (problems.empty()) return;
  std::string message =
      what + ": does not match " + std::string(schema_name(schema)) + ".schema.json";
  for (const std::string& p : problems) message += "\n  " + p;
  throw SiteError(message);
}

void require_schema(const Json& document, Schema schema, const std::string& what) {
  require_schema(nlohmann::json(document), schema, what);
}

}  // namespace heapscope::site
