// `hsbench verify DIR`: re-checks a published site and names the first problem.
// Order: the detached digest (and the expected digest, when given) -> the manifest's bytes
// against it -> the manifest's schema -> every listed file (present, size, SHA-256, media
// type) -> files on disk the manifest does not list -> pages and stylesheet are inert (no
// script, event handler or remote URL) -> every JSON file against its schema
// (latest.json and each run's summary, history.jsonl rows, raw-run copies) and the links
// between them (each run's raw copy is in the manifest).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace heapscope::site {

struct VerifyResult {
  bool ok = false;
  std::string problem;          // the first problem, naming the file; empty when ok
  std::string manifest_sha256;  // from the detached digest file, when readable
  std::size_t files = 0;        // files checked against the manifest
};

// Why a page or stylesheet could run code or reach the network (a script, an event-handler
// attribute, a remote URL, @import, an embedded object), or "" when it is inert.
std::string active_content(const std::string& text);

// expected_digest: the manifest SHA-256 publish printed, kept outside the site.
VerifyResult verify_site(const std::filesystem::path& dir,
                         const std::optional<std::string>& expected_digest = std::nullopt);

}  // namespace heapscope::site
