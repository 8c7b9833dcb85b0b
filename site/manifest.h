// Sealing a site directory: manifest.json ("heapscope.site-manifest", schema_version 1) lists
// every other file with its size, SHA-256 and media type, sorted by path; the detached digest
// manifest.json.sha256 ("<hex>  manifest.json\n", the sha256sum format, so `sha256sum -c`
// checks it too) pins the manifest. Publish prints the digest: keep it elsewhere (a CI log, a
// release note) and give it to `hsbench verify --digest` to detect a consistently forged site.
#pragma once

#include <filesystem>
#include <string>

#include "site_json.h"

namespace heapscope::site {

inline constexpr const char* kManifestSchema = "heapscope.site-manifest";
inline constexpr int kManifestSchemaVersion = 1;
inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kDigestFile = "manifest.json.sha256";

// By extension; "application/octet-stream" for anything else.
std::string media_type(const std::string& path);

// Regular files under `dir` except the manifest and its digest, as sorted relative paths.
// Throws SiteError for anything that is not a regular file or directory (symlinks, fifos).
std::vector<std::string> site_files(const std::filesystem::path& dir);

Json build_manifest(const std::filesystem::path& dir);

// Writes manifest.json and manifest.json.sha256; returns the manifest's SHA-256.
std::string seal_site(const std::filesystem::path& dir);

// The digest file's content for a manifest digest.
std::string digest_line(const std::string& manifest_sha256);

}  // namespace heapscope::site
