// The site library without the hsbench command: schemas accept what we write and reject what
// we must not; the comparison key reacts to every comparability field and ignores volatile
// ones; history rows append and refuse duplicates; pages are inert (no script, no remote
// reference) and draw data marks; the application section renders an application summary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "base/sha256.h"
#include "site/charts.h"
#include "site/comparison_key.h"
#include "site/envelope.h"
#include "site/history.h"
#include "site/html.h"
#include "site/manifest.h"
#include "site/schema_validation.h"
#include "site/site_files.h"
#include "site/site_verify.h"
#include "site/testing/fixture_campaign.h"

namespace heapscope::site {
namespace {

using testing::fixture_raw_run;
using testing::fixture_summary;
using testing::FixtureSpec;

RunInput input_of(const Json& raw) {
  RunInput in;
  in.path = "fixture.json";
  in.text = raw.dump(1);
  in.sha256 = base::sha256_hex(in.text);
  in.raw = raw;
  in.summary = fixture_summary(raw);
  return in;
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

TEST(Schemas, AcceptTheFixtureAndWhatPublishBuildsFromIt) {
  const Json raw = fixture_raw_run({});
  EXPECT_EQ(schema_violations(raw, Schema::kRawRun), std::vector<std::string>{});
  const PublishedRun run = publish_run(input_of(raw));
  EXPECT_EQ(schema_violations(run.entry["summary"], Schema::kSummary), std::vector<std::string>{});
  EXPECT_EQ(schema_violations(latest_envelope({run}), Schema::kLatest), std::vector<std::string>{});
  EXPECT_EQ(schema_violations(history_row(run.entry), Schema::kHistoryRow),
            std::vector<std::string>{});
}

TEST(Schemas, RejectDriftAtEveryLevel) {
  const Json raw = fixture_raw_run({});
  auto rejected = [](const Json& doc, Schema schema) {
    return !schema_violations(doc, schema).empty();
  };
  Json unknown_top = raw;
  unknown_top["surprise"] = 1;
  EXPECT_TRUE(rejected(unknown_top, Schema::kRawRun));
  Json bad_version = raw;
  bad_version["schema_version"] = 5;
  EXPECT_TRUE(rejected(bad_version, Schema::kRawRun));
  // Version 4: the memory record's timeline is typed and closed.
  Json version_4 = fixture_raw_run({.protocols = true});
  ASSERT_EQ(version_4["schema_version"], 4);
  EXPECT_FALSE(rejected(version_4, Schema::kRawRun));
  Json& timeline = version_4["samples"][0]["memory"]["timeline"];
  timeline["stride"] = 0;
  EXPECT_TRUE(rejected(version_4, Schema::kRawRun));
  timeline["stride"] = 1;
  timeline["anon_bytes"][0] = -1;
  EXPECT_TRUE(rejected(version_4, Schema::kRawRun));
  timeline["anon_bytes"][0] = 1;
  timeline["extra"] = true;
  EXPECT_TRUE(rejected(version_4, Schema::kRawRun));
  Json version_3 = raw;  // the latency protocol's version; its "latency" record is typed
  version_3["schema_version"] = 3;
  EXPECT_FALSE(rejected(version_3, Schema::kRawRun));
  version_3["samples"][0]["measurement"]["latency"] =
      Json{{"method", "open-loop-intended-start-v1"}};
  EXPECT_TRUE(rejected(version_3, Schema::kRawRun));
  Json version_2 = raw;  // the memory protocol's version; its "memory" record is typed
  version_2["schema_version"] = 2;
  EXPECT_FALSE(rejected(version_2, Schema::kRawRun));
  version_2["samples"][0]["memory"] = Json{{"method", "proc-statm-anon-v1"}};
  EXPECT_TRUE(rejected(version_2, Schema::kRawRun));
  Json ok_without_measurement = raw;
  ok_without_measurement["samples"][3].erase("measurement");
  EXPECT_TRUE(rejected(ok_without_measurement, Schema::kRawRun));
  Json negative_rate = raw;
  negative_rate["samples"][0]["measurement"]["ops_per_sec"] = -5.0;
  EXPECT_TRUE(rejected(negative_rate, Schema::kRawRun));
  Json unknown_sample_field = raw;
  unknown_sample_field["samples"][1]["extra"] = true;
  EXPECT_TRUE(rejected(unknown_sample_field, Schema::kRawRun));
  // The application object is open inside, optional outside.
  Json app = raw;
  app["application"] = {{"argv", {"x"}}, {"cwd", "/"}, {"anything", {{"else", 1}}}};
  EXPECT_FALSE(rejected(app, Schema::kRawRun));

  const Json summary = fixture_summary(raw);
  Json bad_summary = summary;
  bad_summary["cells"][0]["allocators"][1]["effect_vs_baseline"]["ci_low"] = "low";
  EXPECT_TRUE(rejected(bad_summary, Schema::kSummary));
  const Json row = history_row(publish_run(input_of(raw)).entry);
  Json bad_row = row;
  bad_row["comparison_key"] = "not-a-digest";
  EXPECT_TRUE(rejected(bad_row, Schema::kHistoryRow));
  // The message names the place.
  const auto problems = schema_violations(bad_row, Schema::kHistoryRow);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("comparison_key"), std::string::npos) << problems.front();
}

TEST(ComparisonKey, ChangesWithComparabilityNotWithVolatileFields) {
  const Json raw = fixture_raw_run({});
  const std::string key = comparison_key(raw, "mimalloc")["digest"];
  auto key_of = [](const Json& r) {
    return comparison_key(r, "mimalloc")["digest"].get<std::string>();
  };

  Json volatile_fields = raw;
  volatile_fields["seed"] = 7;
  volatile_fields["created"] = "2030-01-01T00:00:00Z";
  volatile_fields["tool"]["engine_version"] = "0.1.0+fffffff-dirty";
  volatile_fields["hosts"][0]["hostname"] = "other";
  volatile_fields["hosts"][0]["release"] = "6.9.9";
  volatile_fields["allocators"][1]["version"] = "0.1.0+1234567";  // engine: commit only
  volatile_fields["allocators"][1]["sha256"] = std::string(64, 'f');
  volatile_fields["campaign"]["blocks"] = 99;
  EXPECT_EQ(key_of(volatile_fields), key);

  Json other_version = raw;
  other_version["allocators"][2]["version"] = "2.1.0-1";
  EXPECT_NE(key_of(other_version), key);
  Json other_options = raw;
  other_options["allocators"][0]["env"] = {{"MIMALLOC_ARENA_EAGER_COMMIT", "1"}};
  EXPECT_NE(key_of(other_options), key);
  Json other_cpu = raw;
  other_cpu["hosts"][0]["cpu_model"] = "Another CPU";
  EXPECT_NE(key_of(other_cpu), key);
  Json other_cores = raw;
  other_cores["hosts"][0]["nproc"] = 64;
  EXPECT_NE(key_of(other_cores), key);
  Json other_target = raw;
  other_target["campaign"]["target_seconds"] = {0.5, 2.0};
  EXPECT_NE(key_of(other_target), key);
  EXPECT_NE(comparison_key(raw, "glibc")["digest"], key);
  Json fewer_threads = fixture_raw_run({.threads = {1}});
  EXPECT_NE(key_of(fewer_threads), key);
}

TEST(History, AppendsVerbatimAndRefusesDuplicates) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("hs-site-history-" + std::to_string(getpid()) + ".jsonl"))
                               .string();
  std::filesystem::remove(path);
  EXPECT_TRUE(load_history(path).rows.empty());  // missing = empty
  const Json a = history_row(publish_run(input_of(fixture_raw_run({}))).entry);
  const Json b = history_row(
      publish_run(input_of(fixture_raw_run({.created = "2026-02-02T00:00:00Z"}))).entry);
  ASSERT_NE(a["run_id"], b["run_id"]);
  write_file(path, append_rows(load_history(path), {a}));
  const std::string first = read_file(path);
  write_file(path, append_rows(load_history(path), {b}));
  const History h = load_history(path);
  ASSERT_EQ(h.rows.size(), 2u);
  EXPECT_EQ(h.text.substr(0, first.size()), first);  // earlier bytes untouched
  EXPECT_THROW(require_new_run(h, a["run_id"], path), SiteError);
  EXPECT_NO_THROW(require_new_run(h, "someone-else", path));

  // A truncated file and a line that is not a row are refused, naming file and line.
  write_file(path, first.substr(0, first.size() - 10));
  try {
    load_history(path);
    ADD_FAILURE() << "truncated history accepted";
  } catch (const SiteError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  write_file(path, first + "{\"schema\": \"something-else\"}\n");
  try {
    load_history(path);
    ADD_FAILURE() << "foreign row accepted";
  } catch (const SiteError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

// `raws` must outlive the model (it points into it).
SiteModel model_of(const std::vector<Json>& raws, std::vector<PublishedRun>& runs) {
  SiteModel model;
  for (const Json& raw : raws) {
    runs.push_back(publish_run(input_of(raw)));
    model.history.push_back(history_row(runs.back().entry));
  }
  model.latest = latest_envelope(runs);
  for (const Json& raw : raws) model.raws.push_back(&raw);
  return model;
}

TEST(Pages, AreInertAndDrawEveryCell) {
  const std::vector<Json> raws = {fixture_raw_run({.allocators = 4, .workloads = 3})};
  std::vector<PublishedRun> runs;
  const SiteModel model = model_of(raws, runs);
  for (const std::string& page :
       {index_page(model), scaling_page(model), provenance_page(model), reproduce_page(model)}) {
    EXPECT_EQ(page.find("<script"), std::string::npos);
    EXPECT_EQ(page.find("http://"), std::string::npos);
    EXPECT_EQ(page.find("https://"), std::string::npos);
    EXPECT_EQ(page.find("@import"), std::string::npos);
    EXPECT_EQ(active_content(page), "");
    EXPECT_EQ(page.find("<foreignObject"), std::string::npos);
  }
  const std::string index = index_page(model);
  // Throughput + RSS: 3 workloads x 3 candidates x 2 thread counts each; history: 3 points.
  EXPECT_EQ(count(index, "class=\"mark\""), 2u * 18u + 3u);
  EXPECT_EQ(count(index, "role=\"img\""), 2u * 2u + 1u);
  EXPECT_NE(index.find("Not collected yet"), std::string::npos);
  EXPECT_NE(index.find("Memory over time"), std::string::npos);
  EXPECT_NE(index.find("Latency percentiles"), std::string::npos);
  EXPECT_NE(index.find("Profiler tax"), std::string::npos);
  EXPECT_EQ(index.find("Application"), std::string::npos);  // no application field: no section
  // Scaling: one chart per workload, 4 allocators x 2 thread counts; 4 threads > 2 CPUs shaded.
  const std::string scaling = scaling_page(model);
  EXPECT_EQ(count(scaling, "class=\"mark\""), 3u * 4u * 2u);
  EXPECT_EQ(count(scaling, "class=\"shade\""), 3u);
  EXPECT_NE(scaling.find("oversubscribed (&gt; 2 CPUs)"), std::string::npos);
  // Reproduce: one command per cell and allocator, naming samples of the shipped raw copy.
  const std::string reproduce = reproduce_page(model);
  EXPECT_EQ(count(reproduce, "<code>hsbench reproduce raw/"), 3u * 2u * 4u);
}

// The inertness check verify applies to every page fires on each kind of active content.
TEST(Pages, ActiveContentIsRecognised) {
  EXPECT_EQ(active_content("<p class=\"note\">based on=3 runs</p>"), "");
  for (const char* bad :
       {"<SCRIPT>x()</SCRIPT>", "<p onclick=\"x()\">", "<a href=\"https://example.com/\">",
        "<img src='http://x/y.png'>", "p { background: url(http://x/y.png) }", "@import 'x.css';",
        "<a href=\"javascript:x()\">", "<iframe src=x>",
        "<svg><foreignObject></foreignObject></svg>", "<body onload=x()>"}) {
    EXPECT_NE(active_content(bad), "") << bad;
  }
}

TEST(Pages, ShowFailedSamples) {
  Json raw = fixture_raw_run({.allocators = 3, .workloads = 1});
  Json& failed = raw["samples"][4];
  failed["status"] = "failed";
  failed["failure"] = {{"kind", "timeout"}, {"reason", "killed after 60 s"}};
  failed.erase("measurement");
  ASSERT_EQ(schema_violations(raw, Schema::kRawRun), std::vector<std::string>{});
  const std::vector<Json> raws{raw};
  std::vector<PublishedRun> runs;
  const SiteModel model = model_of(raws, runs);
  const std::string index = index_page(model);
  EXPECT_NE(index.find("1 failed sample(s)"), std::string::npos);
  EXPECT_NE(index.find(failed["id"].get<std::string>()), std::string::npos);
  EXPECT_NE(index.find("killed after 60 s"), std::string::npos);
  EXPECT_NE(index.find(" + 1 failed"), std::string::npos);  // in the effects table
}

TEST(Pages, EscapeTextFromTheRawRun) {
  Json raw = fixture_raw_run({.allocators = 2, .workloads = 1});
  for (Json& a : raw["allocators"]) {
    if (a["id"] == "engine") a["version"] = "<script>alert(1)</script>";
  }
  const std::vector<Json> raws{raw};
  std::vector<PublishedRun> runs;
  const SiteModel model = model_of(raws, runs);
  const std::string provenance = provenance_page(model);
  EXPECT_EQ(provenance.find("<script>"), std::string::npos);
  EXPECT_NE(provenance.find("&lt;script&gt;"), std::string::npos);
}

// An application summary in the format `hsbench app` reports, written by hand so the test
// does not depend on the harness: rendered generically in an "Application" section.
TEST(Pages, ApplicationRunsGetAnApplicationSection) {
  Json raw =
      fixture_raw_run({.allocators = 2, .workloads = 1, .threads = {1}, .application = true});
  RunInput in;
  in.path = "app.json";
  in.text = raw.dump();
  in.sha256 = base::sha256_hex(in.text);
  in.raw = raw;
  Json effect{{"paired_blocks", 5}, {"effect", 1.25},   {"ci_low", 1.1},
              {"ci_high", 1.4},     {"ci_valid", true}, {"bootstrap_seed", 1}};
  in.summary = {{"schema", "heapscope.campaign-summary"},
                {"schema_version", 1},
                {"campaign", "app:fixture-0"},
                {"seed", 42},
                {"baseline", "mimalloc"},
                {"metric", "wall_seconds"},
                {"direction", "lower-is-better"},
                {"effect_method", "percentile-block-bootstrap-type7-v1"},
                {"resamples", 10000},
                {"confidence", 0.95},
                {"complete", true},
                {"application", {{"argv", {"/usr/bin/fixture-app"}}}},
                {"samples", {{"total", 10}, {"ok", 10}, {"failed", 0}}},
                {"cells",
                 {{{"workload", "app:fixture-0"},
                   {"threads", 1},
                   {"allocators",
                    {{{"allocator", "mimalloc"},
                      {"n", 5},
                      {"failed", 0},
                      {"wall_seconds", {{"median", 2.0}}},
                      {"peak_rss_bytes", {{"median", 5e7}}},
                      {"effect_vs_baseline", nullptr}},
                     {{"allocator", "engine"},
                      {"n", 5},
                      {"failed", 0},
                      {"wall_seconds", {{"median", 1.6}}},
                      {"peak_rss_bytes", {{"median", 4e7}}},
                      {"effect_vs_baseline", effect},
                      {"rss_effect_vs_baseline", effect}}}}}}},
                {"failures", Json::array()},
                {"unavailable_allocators", Json::array()}};
  EXPECT_EQ(schema_violations(in.summary, Schema::kSummary), std::vector<std::string>{});
  std::vector<PublishedRun> runs{publish_run(in)};
  EXPECT_EQ(schema_violations(latest_envelope(runs), Schema::kLatest), std::vector<std::string>{});
  EXPECT_EQ(schema_violations(history_row(runs[0].entry), Schema::kHistoryRow),
            std::vector<std::string>{});
  SiteModel model;
  model.latest = latest_envelope(runs);
  model.raws = {&raw};
  const std::string index = index_page(model);
  EXPECT_NE(index.find(">Application</h3>"), std::string::npos);
  EXPECT_NE(index.find("wall_seconds (median)"), std::string::npos);
  EXPECT_NE(index.find("1.250 [1.100, 1.400]"), std::string::npos);
  EXPECT_NE(index.find("/usr/bin/fixture-app"), std::string::npos);
  EXPECT_EQ(index.find("Throughput relative"), std::string::npos);  // not a throughput run
}

// The deep-nesting check of fuzz/harness_reader_fuzz: schema validation copies the document
// recursively, so a 100000-deep manifest or history line overflowed the stack; now each is refused
// by name.
// Eight allocators with long names: the ratio chart keeps the plot's width (a grid column) and
// wraps its legend onto more rows instead of widening past it.
TEST(Charts, RatioLegendWrapsInsteadOfWideningTheChart) {
  RatioChart c;
  c.id = "r";
  c.title = "throughput";
  c.baseline = "mimalloc";
  for (int s = 0; s < 8; ++s) {
    c.series.push_back("allocator-with-a-long-name-" + std::to_string(s));
    c.colors.push_back("#336699");
  }
  for (int g = 0; g < 3; ++g) {
    RatioGroup group;
    group.label = "cell " + std::to_string(g);
    for (std::size_t s = 0; s < 8; ++s) group.bars.push_back({s, 1.0 + 0.01 * g, {}, ""});
    c.groups.push_back(group);
  }
  const std::string svg = ratio_chart(c);
  EXPECT_NE(svg.find("width=\"438.0\""), std::string::npos) << svg.substr(0, 200);  // 62+360+16
  std::set<std::string> swatch_rows;
  for (std::size_t at = svg.find("legend-swatch"); at != std::string::npos;
       at = svg.find("legend-swatch", at + 1)) {
    const std::size_t tag = svg.rfind("<rect", at);
    const std::size_t y = svg.find(" y=\"", tag);
    swatch_rows.insert(svg.substr(y + 4, svg.find('"', y + 4) - y - 4));
  }
  EXPECT_GE(swatch_rows.size(), 3u) << "eight long names need several legend rows";
}

TEST(Verify, RefusesDeeplyNestedJson) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hs-site-deep-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  write_file(dir / kManifestFile, deep);
  write_file(dir / kDigestFile, digest_line(base::sha256_hex(deep)));
  const VerifyResult r = verify_site(dir);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.problem.find("manifest.json: nested deeper than 256 levels"), std::string::npos)
      << r.problem;

  const std::string history = (dir / "history.jsonl").string();
  write_file(history, deep + "\n");
  try {
    load_history(history);
    ADD_FAILURE() << "a 100000-deep history line was accepted";
  } catch (const SiteError& e) {
    EXPECT_NE(std::string(e.what()).find(":1: nested deeper"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace heapscope::site
