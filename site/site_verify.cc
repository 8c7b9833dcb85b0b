#include "site_verify.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "base/json_depth.h"
#include "base/sha256.h"
#include "manifest.h"
#include "schema_validation.h"
#include "site_files.h"
#include "site_json.h"

namespace heapscope::site {
namespace {

bool is_hex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool safe_relative(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  for (const auto& part : std::filesystem::path(path)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

Json parse_json(const std::string& text, const std::string& what) {
  if (base::json_nesting_depth(text) > base::kMaxJsonNesting) {
    throw SiteError(what + ": nested deeper than " + std::to_string(base::kMaxJsonNesting) +
                    " levels");
  }
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw SiteError(what + ": not valid JSON (" + e.what() + ")");
  }
}

// Content checks once every byte is known to be the sealed one: a consistently re-sealed
// site must still hold documents of our formats.
void check_documents(const std::filesystem::path& dir, const std::set<std::string>& listed) {
  const Json latest = parse_json(read_file(dir / "latest.json"), "latest.json");
  require_schema(latest, Schema::kLatest, "latest.json");
  for (const Json& run : latest["runs"]) {
    const std::string id = run["run_id"].get<std::string>();
    require_schema(run["summary"], Schema::kSummary, "latest.json: run " + id + " summary");
    const std::string copy = run["raw"]["copy"].get<std::string>();
    if (!listed.contains(copy)) {
      throw SiteError("latest.json: run " + id + " names raw copy " + copy +
                      ", which the manifest does not list");
    }
    if (run["raw"]["copy_is_complete"] == true &&
        base::sha256_hex(read_file(dir / copy)) != run["raw"]["source_sha256"]) {
      throw SiteError(copy + ": is said to be the whole raw run of " + id +
                      " but its SHA-256 is not the recorded source_sha256");
    }
  }
  for (const std::string& path : listed) {
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".html" || ext == ".css" || ext == ".svg") {
      if (const std::string why = active_content(read_file(dir / path)); !why.empty()) {
        throw SiteError(path + ": not inert: " + why);
      }
    }
    if (path.rfind("raw/", 0) == 0) {
      require_schema(parse_json(read_file(dir / path), path), Schema::kRawRun, path);
    }
  }
  const std::string history = read_file(dir / "history.jsonl");
  std::size_t line_no = 0, begin = 0;
  while (begin < history.size()) {
    const std::size_t end = history.find('\n', begin);
    if (end == std::string::npos) throw SiteError("history.jsonl: last line has no newline");
    const std::string where = "history.jsonl:" + std::to_string(++line_no);
    require_schema(parse_json(history.substr(begin, end - begin), where), Schema::kHistoryRow,
                   where);
    begin = end + 1;
  }
}

VerifyResult check(const std::filesystem::path& dir, const std::optional<std::string>& expected) {
  VerifyResult r;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw SiteError(dir.string() + ": not a directory");
  if (!std::filesystem::exists(dir / kDigestFile, ec)) {
    throw SiteError(std::string(kDigestFile) + ": missing (the detached digest of the manifest)");
  }
  const std::string digest_text = read_file(dir / kDigestFile);
  const std::string digest = digest_text.substr(0, 64);
  if (!is_hex64(digest) || digest_text != digest_line(digest)) {
    throw SiteError(std::string(kDigestFile) + ": not of the form '<sha256>  manifest.json'");
  }
  r.manifest_sha256 = digest;
  if (expected && *expected != digest) {
    throw SiteError(std::string(kDigestFile) + ": the manifest digest " + digest +
                    " is not the expected " + *expected + " (manifest replaced)");
  }
  if (!std::filesystem::exists(dir / kManifestFile, ec)) {
    throw SiteError(std::string(kManifestFile) + ": missing");
  }
  const std::string manifest_text = read_file(dir / kManifestFile);
  if (base::sha256_hex(manifest_text) != digest) {
    throw SiteError(std::string(kManifestFile) + ": does not match its detached digest in " +
                    kDigestFile + " (the manifest or the digest was changed or replaced)");
  }
  const Json manifest = parse_json(manifest_text, kManifestFile);
  require_schema(manifest, Schema::kManifest, kManifestFile);

  std::set<std::string> listed;
  for (const Json& f : manifest["files"]) {
    const auto path = f["path"].get<std::string>();
    if (!safe_relative(path)) throw SiteError(std::string(kManifestFile) + ": unsafe path " + path);
    if (!listed.insert(path).second) {
      throw SiteError(std::string(kManifestFile) + ": lists " + path + " twice");
    }
    if (!std::filesystem::is_regular_file(dir / path, ec)) {
      throw SiteError(path + ": missing (listed in the manifest)");
    }
    const std::string bytes = read_file(dir / path);
    if (bytes.size() != f["bytes"].get<std::uint64_t>()) {
      throw SiteError(path + ": " + std::to_string(bytes.size()) + " bytes, the manifest says " +
                      f["bytes"].dump());
    }
    if (base::sha256_hex(bytes) != f["sha256"].get<std::string>()) {
      throw SiteError(path + ": SHA-256 differs from the manifest (the file was changed)");
    }
    if (f["media_type"] != media_type(path)) {
      throw SiteError(path + ": media type " + f["media_type"].dump() + " in the manifest, " +
                      "expected \"" + media_type(path) + "\"");
    }
    ++r.files;
  }
  for (const std::string& path : site_files(dir)) {
    if (!listed.contains(path)) throw SiteError(path + ": not in the manifest (added file)");
  }
  for (const char* required : {"latest.json", "history.jsonl", "index.html"}) {
    if (!listed.contains(required)) {
      throw SiteError(std::string(required) + ": missing (a site always has it)");
    }
  }
  check_documents(dir, listed);
  r.ok = true;
  return r;
}

}  // namespace

// The pages are ours, so a plain scan suffices: no script elements, javascript: URLs, @import,
// remote URLs in attributes or url(), and no on*= event-handler attributes inside tags.
std::string active_content(const std::string& text) {
  std::string lower(text.size(), ' ');
  std::transform(text.begin(), text.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* bad :
       {"<script", "javascript:", "@import", "=\"http", "='http", "=http", "url(http", "url(\"http",
        "url('http", "<iframe", "<object", "<embed", "<foreignobject"}) {
    if (lower.find(bad) != std::string::npos) return std::string("contains '") + bad + "'";
  }
  bool in_tag = false;
  for (std::size_t i = 0; i < lower.size(); ++i) {
    if (lower[i] == '<') in_tag = true;
    if (lower[i] == '>') in_tag = false;
    if (!in_tag || !std::isspace(static_cast<unsigned char>(lower[i])) ||
        lower.compare(i + 1, 2, "on") != 0) {
      continue;
    }
    std::size_t j = i + 3;
    while (j < lower.size() && std::isalpha(static_cast<unsigned char>(lower[j]))) ++j;
    if (j > i + 3 && j < lower.size() && lower[j] == '=') return "has an event-handler attribute";
  }
  return "";
}

VerifyResult verify_site(const std::filesystem::path& dir,
                         const std::optional<std::string>& expected_digest) {
  try {
    return check(dir, expected_digest);
  } catch (const SiteError& e) {
    VerifyResult r;
    r.problem = e.what();
    return r;
  } catch (const std::filesystem::filesystem_error& e) {
    VerifyResult r;
    r.problem = e.what();
    return r;
  }
}

}  // namespace heapscope::site
