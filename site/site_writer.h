// `hsbench publish` without the statistics: given validated runs (raw run + summary), writes
// the whole site into a temporary directory beside DIR, checks every JSON it wrote against its
// schema, seals it, verifies the sealed result, and only then replaces DIR and the history
// file (each by rename). Any refusal leaves DIR and the history exactly as they were.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "envelope.h"

namespace heapscope::site {

struct PublishRequest {
  std::vector<RunInput> runs;
  std::filesystem::path out_dir;
  std::string history_path;  // empty: the site's history holds only these runs
};

struct PublishResult {
  std::string manifest_sha256;
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  std::vector<std::string> run_ids;
};

// Throws SiteError (duplicate run, invalid history, DIR exists but is not a site, I/O).
PublishResult publish_site(const PublishRequest& request);

}  // namespace heapscope::site
