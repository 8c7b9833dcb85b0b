// Fuzz target: every reader of files hsbench does not write itself in this run. One target
// for all of them, chosen by the first input byte, because they share one failure contract and
// one JSON parser, and one target keeps one corpus whose JSON fragments (mutated by libFuzzer)
// cross-pollinate between readers:
//   0 raw run     load_raw_run, then summarize_raw_run and print_report (`hsbench report`)
//   1 summary     schema check (site/schemas/summary.schema.json), then print_report
//   2 campaign    load_campaign (a campaign file)
//   3 manifest    verify_site on a directory holding the input as manifest.json, sealed by a
//                 matching detached digest so verify gets past the digest to the manifest
// The rest of the input is the file. (The site's history.jsonl reader is internal to site/;
// verify reaches it only behind a schema-valid latest.json, so it is not fuzzed here.) Contract: a
// malformed, truncated, mistyped, huge or deeply nested file ends in the reader's own error
// (RawRunError, CampaignError, SiteError, or verify's problem string), never in a crash, an abort,
// a hang or another exception type (which escapes here and libFuzzer reports as a crash).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "base/sha256.h"
#include "harness/campaign/campaign_spec.h"
#include "harness/campaign/raw_run.h"
#include "harness/report/report.h"
#include "site/manifest.h"
#include "site/schema_validation.h"
#include "site/site_json.h"
#include "site/site_verify.h"

namespace {

namespace fs = std::filesystem;
using heapscope::harness::CampaignError;
using heapscope::harness::RawRunError;
using heapscope::site::SiteError;

enum class Reader : uint8_t { kRawRun, kSummary, kCampaign, kManifest, kCount };

// A directory of this process's own, emptied before every input.
const fs::path& scratch_dir() {
  static const fs::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    fs::path d = fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
                 ("heapscope_reader_fuzz." + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

fs::path write_scratch(const std::string& name, std::string_view bytes) {
  fs::path path = scratch_dir() / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

void read_raw_run(std::string_view file) {
  const std::string path = write_scratch("run.raw.json", file).string();
  try {
    const heapscope::harness::Json raw = heapscope::harness::load_raw_run(path);
    const heapscope::harness::Json summary = heapscope::harness::summarize_raw_run(raw, "");
    std::ostringstream report;
    heapscope::harness::print_report(report, summary);
  } catch (const RawRunError&) {
  }
}

void read_summary(std::string_view file) {
  const std::string path = write_scratch("summary.json", file).string();
  heapscope::harness::Json summary;
  try {
    summary = heapscope::harness::load_json_file(path);
    heapscope::site::require_schema(summary, heapscope::site::Schema::kSummary, path);
  } catch (const RawRunError&) {
    return;
  } catch (const SiteError&) {
    return;
  }
  // A summary the schema accepts prints, or is refused with the reader's error.
  try {
    std::ostringstream report;
    heapscope::harness::print_report(report, summary);
  } catch (const RawRunError&) {
  }
}

void read_campaign(std::string_view file) {
  const std::string path = write_scratch("campaign.json", file).string();
  try {
    (void)heapscope::harness::load_campaign(path);
  } catch (const CampaignError&) {
  }
}

void verify_manifest(std::string_view file) {
  const std::string manifest(file);
  write_scratch(heapscope::site::kManifestFile, manifest);
  write_scratch(heapscope::site::kDigestFile,
                heapscope::site::digest_line(heapscope::base::sha256_hex(manifest)));
  const heapscope::site::VerifyResult result = heapscope::site::verify_site(scratch_dir());
  if (!result.ok && result.problem.empty()) std::abort();  // a refusal must say why
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto reader = static_cast<Reader>(data[0] % static_cast<uint8_t>(Reader::kCount));
  const std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(scratch_dir(), ignored)) {
    fs::remove_all(entry.path(), ignored);
  }
  switch (reader) {
    case Reader::kRawRun:
      read_raw_run(file);
      break;
    case Reader::kSummary:
      read_summary(file);
      break;
    case Reader::kCampaign:
      read_campaign(file);
      break;
    case Reader::kManifest:
      verify_manifest(file);
      break;
    case Reader::kCount:
      break;
  }
  return 0;
}
