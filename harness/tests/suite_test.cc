// `hsbench suite` end to end (integration): the built-in debian suite's --quick selection (two
// small cases, sqlite and lua) under glibc and the engine, with its report, reproduction of one
// sample and publication; a suite with a failing case (recorded, the suite goes on); a resumed
// run; and bad suite files refused with errors that name the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "harness/tests/campaign_test_util.h"

namespace heapscope::harness::testing {
namespace {

std::string all_output(const CommandResult& r) { return r.out + r.err; }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// A suite of shell commands: fast and under the test's control.
std::string tiny_suite(const std::string& bad_check) {
  return R"({"schema": "heapscope.suite", "schema_version": 1, "name": "tiny", "blocks": 2,
  "warmup": 1, "input_seed": 5, "cases": [
   {"name": "ok", "inputs": [{"file": "in.txt", "generator": ["sh", "-c", "seq 1 {input_seed}"]}],
    "command": ["sh", "-c", "sort -rn in.txt | head -1"], "check": {"stdout_regex": "^5$"}},
   {"name": "broken", "inputs": [{"file": "in.txt", "generator": ["seq", "1", "2000"]}],
    "command": ["sort", "-rn", "in.txt"],
    "check": {"stdout_regex": ")" +
         bad_check + R"("}}]})";
}

TEST(SuiteQuick, DebianQuickCasesRunReportReproduceAndPublish) {
  ScratchDir dir("suite-quick");
  const CommandResult r = hsbench({"suite", "debian", "--quick", "--allocators", "glibc,engine",
                                   "--warmup", "0", "--seed", "3", "--out", dir / "raw.json"},
                                  240000);
  ASSERT_EQ(r.exit_code, 0) << all_output(r);
  EXPECT_TRUE(contains(r.out, "geometric mean over the 2 cases measured against glibc")) << r.out;
  const auto raw = read_json(dir / "raw.json");
  EXPECT_EQ(raw["campaign"]["name"], "suite:debian");
  EXPECT_EQ(raw["complete"], true);
  EXPECT_EQ(raw["suite"]["quick"], true);
  std::set<std::string> cases;
  for (const auto& c : raw["suite"]["cases"]) {
    cases.insert(c["name"].get<std::string>());
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_EQ(c["probe"]["blocked"], false);
    // The probe proved each allocator serves malloc in the case's processes.
    for (const auto& a : c["probe"]["allocators"]) EXPECT_EQ(a["serves_malloc"], true) << a.dump();
    EXPECT_FALSE(c["inputs"].empty());
  }
  EXPECT_EQ(cases, (std::set<std::string>{"sqlite", "lua"}));
  // 2 cases x 2 allocators x 2 blocks, all passing their output checks.
  ASSERT_EQ(raw["samples"].size(), 8u);
  for (const auto& s : raw["samples"]) EXPECT_EQ(s["status"], "ok") << s.dump();

  const CommandResult rep =
      hsbench({"report", dir / "raw.json", "--summary-out", dir / "summary.json"});
  ASSERT_EQ(rep.exit_code, 0) << all_output(rep);
  const auto summary = read_json(dir / "summary.json");
  ASSERT_EQ(summary["suite"]["geomean"].size(), 1u);
  const auto& g = summary["suite"]["geomean"][0];
  EXPECT_EQ(g["allocator"], "engine");
  EXPECT_EQ(g["metric_effect"]["cases"], 2);
  EXPECT_TRUE(g["metric_effect"]["effect"].is_number());

  const CommandResult again = hsbench({"reproduce", dir / "raw.json", "sqlite/t1/b1/engine"});
  EXPECT_EQ(again.exit_code, 0) << all_output(again);
  EXPECT_TRUE(contains(again.out, "output check passes")) << again.out;

  const CommandResult pub = hsbench({"publish", dir / "raw.json", "--out", dir / "site"});
  ASSERT_EQ(pub.exit_code, 0) << all_output(pub);
  std::ifstream index(dir / "site/index.html");
  const std::string html((std::istreambuf_iterator<char>(index)), {});
  EXPECT_TRUE(contains(html, "Suite debian: geometric mean")) << html.substr(0, 2000);
}

TEST(SuiteFailures, FailingCaseIsRecordedAndTheSuiteGoesOnThenResumes) {
  ScratchDir dir("suite-fail");
  write_text(dir / "tiny.suite.json", tiny_suite("^yes$"));
  const CommandResult r = hsbench({"suite", dir / "tiny.suite.json", "--allocators", "glibc,engine",
                                   "--seed", "9", "--out", dir / "raw.json"});
  ASSERT_EQ(r.exit_code, 0) << all_output(r);
  auto raw = read_json(dir / "raw.json");
  ASSERT_EQ(raw["suite"]["cases"].size(), 2u);
  EXPECT_EQ(raw["suite"]["cases"][0]["status"], "ok");
  EXPECT_EQ(raw["suite"]["cases"][1]["status"], "failed");
  EXPECT_TRUE(contains(raw["suite"]["cases"][1]["reason"].get<std::string>(), "output-check"));
  EXPECT_TRUE(contains(r.out, "case broken failed")) << r.out;
  ASSERT_EQ(raw["samples"].size(), 4u);

  // Drop two samples as if the run had been stopped, then resume: only those two run again.
  raw["samples"].erase(raw["samples"].begin() + 2, raw["samples"].end());
  raw["complete"] = false;
  write_text(dir / "raw.json", raw.dump());
  const CommandResult resumed = hsbench({"suite", "--resume", "--out", dir / "raw.json"});
  ASSERT_EQ(resumed.exit_code, 0) << all_output(resumed);
  EXPECT_TRUE(contains(resumed.err, "2 samples run")) << resumed.err;
  const auto done = read_json(dir / "raw.json");
  EXPECT_EQ(done["samples"].size(), 4u);
  EXPECT_EQ(done["complete"], true);
  // A resumed run keeps the recorded suite: reshaping options are refused.
  const CommandResult reshaped =
      hsbench({"suite", "--resume", "--blocks", "5", "--out", dir / "raw.json"});
  EXPECT_EQ(reshaped.exit_code, 2) << all_output(reshaped);
}

TEST(SuiteFiles, BadSuiteFilesAreRefusedNamingTheField) {
  ScratchDir dir("suite-bad");
  const std::pair<std::string, std::string> cases[] = {
      {R"({"schema": "heapscope.suite", "schema_version": 2, "name": "x", "cases": []})",
       "schema_version"},
      {R"({"schema": "heapscope.suite", "schema_version": 1, "name": "x",
           "cases": [{"name": "a", "command": ["true"]}]})",
       "missing required field 'check'"},
      {R"j({"schema": "heapscope.suite", "schema_version": 1, "name": "x",
           "cases": [{"name": "a", "command": ["true"], "check": {"none": true},
                      "metric": {"kind": "throughput", "regex": "([0-9]+) (x)", "unit": "u"}}]})j",
       "exactly one capture group"},
      {R"({"schema": "heapscope.suite", "schema_version": 1, "name": "x",
           "cases": [{"name": "a", "command": ["echo", "{nope}"], "check": {"none": true}}]})",
       "unknown placeholder {nope}"},
      {R"({"schema": "heapscope.suite", "schema_version": 1, "name": "x",
           "cases": [{"name": "a", "command": ["true"], "check": {"none": true},
                      "colour": "red"}]})",
       "unknown field 'colour'"},
      {R"({"schema": "heapscope.suite", "schema_version": 1, "name": "x",
           "cases": [{"name": "a", "command": ["true"], "check": {"none": true},
                      "inputs": [{"file": "../up", "generator": ["true"]}]}]})",
       "inside the work directory"},
      {"{not json", "not valid JSON"}};
  for (const auto& [text, expected] : cases) {
    write_text(dir / "bad.suite.json", text);
    const CommandResult r = hsbench({"suite", dir / "bad.suite.json", "--out", dir / "raw.json"});
    EXPECT_EQ(r.exit_code, 2) << text << "\n" << all_output(r);
    EXPECT_TRUE(contains(r.err, expected)) << text << "\n" << r.err;
  }
  const CommandResult unknown = hsbench({"suite", "no-such-suite", "--out", dir / "raw.json"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(contains(unknown.err, "not a built-in")) << unknown.err;
}

}  // namespace
}  // namespace heapscope::harness::testing
