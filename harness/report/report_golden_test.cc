// The printed reports against committed golden texts: `hsbench report`'s table of a small
// campaign raw run (one without and one with the memory protocol, one with latency, one with
// pairs) and the app report of a small `hsbench app` raw run (testdata/), and the summary JSON
// each is printed from (what `publish` reads). Both are pure functions of the raw run (bootstrap
// seeds come from the run's seed), so any change in them is a change in what users read and must be
// looked at.
//
// To accept an intended change, regenerate the golden files and review their diff:
//   HEAPSCOPE_UPDATE_GOLDEN=1 ctest --test-dir build/release -R 'harness.ReportGolden'
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/campaign/raw_run.h"
#include "harness/report/app_report.h"
#include "harness/report/report.h"

namespace heapscope::harness {
namespace {

const std::string kTestdata = HS_REPORT_TESTDATA;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Every line that differs, as "-expected" / "+actual" pairs with its line number.
std::string line_diff(const std::string& expected, const std::string& actual) {
  const std::vector<std::string> e = lines_of(expected);
  const std::vector<std::string> a = lines_of(actual);
  std::ostringstream d;
  for (std::size_t i = 0; i < std::max(e.size(), a.size()); ++i) {
    const std::string* el = i < e.size() ? &e[i] : nullptr;
    const std::string* al = i < a.size() ? &a[i] : nullptr;
    if (el != nullptr && al != nullptr && *el == *al) continue;
    d << "line " << i + 1 << ":\n";
    if (el != nullptr) d << "  -" << *el << "\n";
    if (al != nullptr) d << "  +" << *al << "\n";
  }
  return d.str();
}

void expect_golden(const std::string& actual, const std::string& golden_name) {
  const std::string path = kTestdata + "/" + golden_name;
  const char* update = std::getenv("HEAPSCOPE_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    std::cout << "rewrote " << path << "\n";
    return;
  }
  const std::string expected = read_text(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing or empty";
  EXPECT_TRUE(expected == actual)
      << "the printed report differs from " << path << " (-golden +now):\n"
      << line_diff(expected, actual)
      << "If the change is intended: HEAPSCOPE_UPDATE_GOLDEN=1 and rerun, then review the diff.";
}

TEST(ReportGolden, CampaignReport) {
  const Json raw = load_raw_run(kTestdata + "/campaign.raw.json");
  const Json summary = summarize_raw_run(raw, "");
  std::ostringstream out;
  print_report(out, summary);
  expect_golden(out.str(), "campaign.report.txt");
  expect_golden(summary.dump(1) + "\n", "campaign.summary.json");
}

// A raw run with the memory protocol (schema version 2; glibc and jemalloc, 2 return points):
// the memory table and the summary's memory blocks.
TEST(ReportGolden, CampaignMemoryReport) {
  const Json raw = load_raw_run(kTestdata + "/campaign_memory.raw.json");
  ASSERT_EQ(raw["schema_version"], 2);
  const Json summary = summarize_raw_run(raw, "");
  std::ostringstream out;
  print_report(out, summary);
  expect_golden(out.str(), "campaign_memory.report.txt");
  expect_golden(summary.dump(1) + "\n", "campaign_memory.summary.json");
}

// A raw run with the latency protocol (schema version 3; glibc against the planted-stall shim,
// 3 blocks at a fixed 40,000 ops/s): the latency table and the summary's latency blocks.
TEST(ReportGolden, CampaignLatencyReport) {
  const Json raw = load_raw_run(kTestdata + "/campaign_latency.raw.json");
  ASSERT_EQ(raw["schema_version"], 3);
  const Json summary = summarize_raw_run(raw, "");
  std::ostringstream out;
  print_report(out, summary);
  expect_golden(out.str(), "campaign_latency.report.txt");
  expect_golden(summary.dump(1) + "\n", "campaign_latency.summary.json");
}

// Pairs (protocol.md#pairs) on the same small campaign: recorded in the campaign (heapscope
// against jemalloc) and given on the command line instead (jemalloc against glibc), the pairs
// table and the summary's "pairs" block; the command line's replace the campaign's.
TEST(ReportGolden, CampaignPairsReport) {
  Json raw = load_raw_run(kTestdata + "/campaign.raw.json");
  raw["campaign"]["pairs"] = Json::array({Json::array({"heapscope", "jemalloc"})});
  const Json summary = summarize_raw_run(raw, "");
  std::ostringstream out;
  print_report(out, summary);
  expect_golden(out.str(), "campaign_pairs.report.txt");
  expect_golden(summary.dump(1) + "\n", "campaign_pairs.summary.json");
  ASSERT_EQ(summary["pairs"].size(), 1u);
  EXPECT_EQ(summary["pairs"][0]["candidate"], "heapscope");

  const Json given = summarize_raw_run(raw, "", {{"jemalloc", "glibc"}});
  ASSERT_EQ(given["pairs"].size(), 1u);
  EXPECT_EQ(given["pairs"][0]["candidate"], "jemalloc");
  EXPECT_EQ(given["pairs"][0]["reference"], "glibc");
  // The same block pairing as the baseline column: jemalloc against glibc (the baseline) is
  // the row's own effect.
  const Json& cell = given["cells"][0];
  for (const Json& row : cell["allocators"]) {
    if (row["allocator"] != "jemalloc") continue;
    EXPECT_EQ(given["pairs"][0]["cells"][0]["effect"]["effect"],
              row["effect_vs_baseline"]["effect"]);
  }
  EXPECT_THROW(summarize_raw_run(raw, "", {{"nope", "glibc"}}), RawRunError);
}

TEST(ReportGolden, AppReport) {
  const Json raw = load_raw_run(kTestdata + "/app.raw.json");
  ASSERT_TRUE(is_app_run(raw));
  const Json summary = summarize_app_run(raw, "");
  std::ostringstream out;
  print_app_report(out, summary);
  expect_golden(out.str(), "app.report.txt");
  expect_golden(summary.dump(1) + "\n", "app.summary.json");
}

// The comparison itself must be able to fail: one changed digit is reported with its line.
TEST(ReportGolden, DiffNamesTheChangedLine) {
  const std::string diff = line_diff("a\nb 1.00\nc\n", "a\nb 1.01\nc\n");
  EXPECT_EQ(diff, "line 2:\n  -b 1.00\n  +b 1.01\n");
}

// The deep-nesting check of fuzz/harness_reader_fuzz: a document nested 100000 deep parses
// (nlohmann's parser does not recurse) but every copy and comparison of it recurses per level and
// overflows the stack, so the reader refuses it up front with its own error.
TEST(RawRunReader, RefusesDeepNesting) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("hs-deep-raw-" + std::to_string(getpid()) + ".json"))
                               .string();
  std::ofstream(path) << std::string(100000, '[') << std::string(100000, ']');
  try {
    load_raw_run(path);
    ADD_FAILURE() << "a 100000-deep document was accepted";
  } catch (const RawRunError& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than 256 levels"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
}

// Crashed fuzz/harness_reader_fuzz (hand-made inputs): a raw run that passes load_raw_run but whose
// measurement or memory record is mistyped or incomplete ended in an uncaught nlohmann::type_error,
// or read past a missing key (ASan: heap-use-after-free inside nlohmann); now RawRunError.
TEST(RawRunReader, MistypedFieldsEndInRawRunError) {
  const Json good = load_raw_run(kTestdata + "/campaign.raw.json");
  auto expect_refused = [](const Json& raw, const char* what) {
    try {
      summarize_raw_run(raw, "");
      ADD_FAILURE() << what << ": summarized";
    } catch (const RawRunError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot be summarized"), std::string::npos) << e.what();
    }
  };
  Json raw = good;
  raw["samples"][0]["measurement"] = 5;
  expect_refused(raw, "a number for a measurement");
  raw = good;
  raw["samples"][0]["measurement"] = Json::object();
  expect_refused(raw, "a measurement without ops_per_sec");
  raw = good;
  raw["samples"][0]["memory"] = {{"complete", true}};
  expect_refused(raw, "a complete memory record without its fields");

  // Fields every reader relies on are typed by load_raw_run itself (a float of 1e300 for an
  // integer would be undefined behaviour to convert).
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("hs-mistyped-raw-" + std::to_string(getpid()) + ".json"))
                               .string();
  for (const Json& threads : {Json(1e300), Json("2"), Json(-1)}) {
    raw = good;
    raw["samples"][0]["threads"] = threads;
    std::ofstream(path) << raw.dump();
    EXPECT_THROW(load_raw_run(path), RawRunError) << threads.dump();
  }
  raw = good;
  raw["calibration"] = {{{"workload", "tiny-hot"}, {"threads", 1e300}}};
  std::ofstream(path) << raw.dump();
  EXPECT_THROW(load_raw_run(path), RawRunError);
  std::filesystem::remove(path);
}

// Found by fuzz/harness_reader_fuzz (30-minute run; ASan heap-use-after-free and
// heap-buffer-overflow): application summaries the summary schema accepts, with a row whose
// "user_seconds" lacks its median or that lacks "wall_seconds"; printing read past the missing
// key. Now RawRunError.
TEST(RawRunReader, PrintingAnIncompleteSummaryIsAnError) {
  const Json app = Json::parse(std::ifstream(kTestdata + "/app.summary.json"));
  Json summary = app;
  summary["cells"][0]["allocators"][1]["user_seconds"].erase("median");
  std::ostringstream out;
  EXPECT_THROW(print_report(out, summary), RawRunError);
  summary = app;
  summary["cells"][0]["allocators"][0].erase("wall_seconds");
  EXPECT_THROW(print_report(out, summary), RawRunError);
  summary = Json::parse(std::ifstream(kTestdata + "/campaign.summary.json"));
  summary["cells"][0]["allocators"][0].erase("ops_per_sec");
  EXPECT_THROW(print_report(out, summary), RawRunError);
}

}  // namespace
}  // namespace heapscope::harness
