// HEAPSCOPE_MEMORY_EVENTS and HEAPSCOPE_MEMORY_SUMMARY, in a child process (events_child.cc)
// linked with the same library as this test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "event_recorder.h"

namespace hs_events_test {
namespace {

struct ChildRun {
  int pid = 0, enabled = -1;
  size_t small = 0, large = 0;
};

ChildRun run_child(const std::string& env) {
  ChildRun run;
  std::string command = env + " " + HS_EVENTS_CHILD;
  FILE* out = popen(command.c_str(), "r");
  if (out == nullptr) return run;
  if (std::fscanf(out, "pid=%d enabled=%d small=%zu large=%zu", &run.pid, &run.enabled, &run.small,
                  &run.large) != 4) {
    run.enabled = -1;
  }
  pclose(out);
  return run;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

uint64_t field(const std::string& json, const std::string& name) {
  size_t at = json.find("\"" + name + "\": ");
  if (at == std::string::npos) return UINT64_MAX;
  return std::stoull(json.substr(at + name.size() + 4));
}

std::string temp_dir() {
  char pattern[] = "/tmp/hs-events-XXXXXX";
  const char* dir = mkdtemp(pattern);
  return dir == nullptr ? std::string("/tmp") : std::string(dir);
}

TEST(MemoryEventsProcess, EnvironmentEnablesAndSummaryIsExact) {
  std::string dir = temp_dir();
  ChildRun run =
      run_child("HEAPSCOPE_MEMORY_EVENTS=1 HEAPSCOPE_MEMORY_SUMMARY=" + dir + "/summary.%p.json");
  ASSERT_GT(run.pid, 0);
  EXPECT_EQ(run.enabled, kEventsOn ? 1 : 0);
  std::string path = dir + "/summary." + std::to_string(run.pid) + ".json";
  std::string json = read_file(path);
  if (!kEventsOn) {
    EXPECT_TRUE(json.empty()) << "no summary without the events compiled in";
    return;
  }
  ASSERT_FALSE(json.empty()) << path;
  uint64_t peak = 1000 * run.small + 10 * run.large;
  EXPECT_EQ(field(json, "total_allocation_calls"), 1011u);
  EXPECT_EQ(field(json, "peak_live_bytes"), peak);
  EXPECT_EQ(field(json, "total_allocated_bytes"), peak + 16);
  // The last 5000-byte block (no allocation after it before its free) and the 7-byte one.
  EXPECT_EQ(field(json, "short_lived_allocations"), 2u);
  EXPECT_EQ(field(json, "live_bytes_at_exit"), 0u);
  EXPECT_NE(json.find("{\"min\": 64, \"max\": 127, \"count\": 1000}"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"min\": 4096, \"max\": 8191, \"count\": 10}"), std::string::npos);
  EXPECT_NE(json.find("{\"min\": 4, \"max\": 7, \"count\": 1}"), std::string::npos);
  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST(MemoryEventsProcess, OffUnlessAskedFor) {
  std::string dir = temp_dir();
  ChildRun run = run_child("HEAPSCOPE_MEMORY_EVENTS=0 HEAPSCOPE_MEMORY_SUMMARY=" + dir + "/s.json");
  EXPECT_EQ(run.enabled, 0);
  std::string json = read_file(dir + "/s.json");
  if (kEventsOn) {
    EXPECT_EQ(field(json, "total_allocation_calls"), 0u) << json;
  }
  unlink((dir + "/s.json").c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace hs_events_test
