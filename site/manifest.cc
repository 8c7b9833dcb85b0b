#include "manifest.h"

#include <algorithm>
#include <map>

#include "base/sha256.h"
#include "site_files.h"

namespace heapscope::site {

std::string media_type(const std::string& path) {
  static const std::map<std::string, std::string> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".jsonl", "application/jsonl"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".txt", "text/plain; charset=utf-8"},
      {".sha256", "text/plain; charset=utf-8"},
      {".md", "text/markdown; charset=utf-8"}};
  const auto it = kTypes.find(std::filesystem::path(path).extension().string());
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

std::vector<std::string> site_files(const std::filesystem::path& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string rel = entry.path().lexically_relative(dir).generic_string();
    if (entry.is_symlink()) throw SiteError(rel + ": a symbolic link (not allowed in a site)");
    if (entry.is_directory()) continue;
    if (!entry.is_regular_file()) throw SiteError(rel + ": not a regular file");
    if (rel == kManifestFile || rel == kDigestFile) continue;
    files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  return files;
}

Json build_manifest(const std::filesystem::path& dir) {
  Json files = Json::array();
  for (const std::string& rel : site_files(dir)) {
    const std::string bytes = read_file(dir / rel);
    files.push_back({{"path", rel},
                     {"bytes", bytes.size()},
                     {"sha256", base::sha256_hex(bytes)},
                     {"media_type", media_type(rel)}});
  }
  return Json{
      {"schema", kManifestSchema}, {"schema_version", kManifestSchemaVersion}, {"files", files}};
}

std::string digest_line(const std::string& manifest_sha256) {
  return manifest_sha256 + "  " + kManifestFile + "\n";
}

std::string seal_site(const std::filesystem::path& dir) {
  const std::string manifest = build_manifest(dir).dump(1) + "\n";
  write_file(dir / kManifestFile, manifest);
  std::string digest = base::sha256_hex(manifest);
  write_file(dir / kDigestFile, digest_line(digest));
  return digest;
}

}  // namespace heapscope::site
