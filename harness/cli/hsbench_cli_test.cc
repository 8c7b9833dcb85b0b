// Drives the real hsbench binary: help, errors and exit codes are part of its interface.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness/process/run_command.h"

namespace heapscope::harness {
namespace {

CommandResult hsbench(const std::vector<std::string>& args) {
  std::vector<std::string> argv{HS_HSBENCH_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Errors of a subcommand: printed once as "hsbench <subcommand>: <message>", with the exit code
// of their kind (1 failure, 2 usage), the first line on stderr and nothing on stdout.
void expect_error(const CommandResult& r, int code, const std::string& prefix) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find(prefix, 1), std::string::npos) << "reported twice:\n" << r.err;
  EXPECT_EQ(r.out, "");
}

const std::string kCampaignRaw = std::string(HS_REPORT_TESTDATA) + "/campaign.raw.json";

TEST(HsbenchCli, UnreadableRawRunIsAFailure) {
  expect_error(hsbench({"report", "/nonexistent/run.raw.json"}), 1,
               "hsbench report: /nonexistent/run.raw.json");
  expect_error(hsbench({"merge", "/nonexistent/a.json", "--out", "/nonexistent/m.json"}), 1,
               "hsbench merge: /nonexistent/a.json");
}

TEST(HsbenchCli, UnknownSampleIsAUsageError) {
  expect_error(hsbench({"reproduce", kCampaignRaw, "no/such/sample"}), 2,
               "hsbench reproduce: no sample 'no/such/sample' in " + kCampaignRaw +
                   " (ids look like <workload>/t<threads>/b<block>/<allocator>)\n");
}

// A scratch folder holding a copy of the golden raw run (runs write next to their output).
class RawRunCopy {
 public:
  RawRunCopy() {
    char pattern[] = "/tmp/hsbench_cli_XXXXXX";
    if (mkdtemp(pattern) != nullptr) dir_ = pattern;
    path_ = dir_ + "/run.raw.json";
    std::filesystem::copy_file(kCampaignRaw, path_);
  }
  ~RawRunCopy() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  const std::string& path() const { return path_; }
  std::string bytes() const {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  std::string dir_;
  std::string path_;
};

void write_lock(const std::string& raw_path, pid_t pid) {
  std::ofstream(raw_path + ".lock") << pid << "\n";
}

TEST(HsbenchCli, RunRefusesToOverwriteOrReshapeARawRun) {
  RawRunCopy raw;
  expect_error(hsbench({"run", "--out", raw.path()}), 1,
               "hsbench run: " + raw.path() +
                   " exists; pass --resume to continue it, or choose another --out\n");
  expect_error(hsbench({"run", "--resume", "--blocks", "2", "--out", raw.path()}), 2,
               "hsbench run: --resume takes the campaign from " + raw.path() +
                   "; do not combine it with options that change the campaign\n");
  EXPECT_FALSE(std::filesystem::exists(raw.path() + ".lock")) << "a refused run left its lock";
}

// Two writers of one raw run: the second is refused while the first (here: this test's own
// live pid in the lock) holds it, and the file is untouched; a lock whose holder is gone is
// taken over.
TEST(HsbenchCli, SecondWriterOfARawRunIsRefusedAndAStaleLockIsTakenOver) {
  RawRunCopy raw;
  const std::string before = raw.bytes();
  write_lock(raw.path(), getpid());
  expect_error(hsbench({"run", "--resume", "--out", raw.path()}), 1,
               "hsbench run: " + raw.path() + " is being written by hsbench process " +
                   std::to_string(getpid()));
  EXPECT_EQ(raw.bytes(), before);
  EXPECT_TRUE(std::filesystem::exists(raw.path() + ".lock")) << "someone else's lock removed";

  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  ASSERT_EQ(waitpid(gone, nullptr, 0), gone);
  write_lock(raw.path(), gone);
  // Past the lock (the golden run itself cannot be resumed: it names no workloads to run).
  const CommandResult r = hsbench({"run", "--resume", "--out", raw.path()});
  EXPECT_FALSE(contains(r.err, "is being written")) << r.err;
  EXPECT_TRUE(contains(r.err, "the campaign lists no workloads")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(raw.path() + ".lock")) << "the lock outlived its run";
}

TEST(HsbenchCli, VerifyOfAMissingSiteIsAFailure) {
  expect_error(hsbench({"verify", "/nonexistent/site"}), 1, "hsbench verify: /nonexistent/site: ");
}

TEST(HsbenchCli, HelpListsSubcommands) {
  const CommandResult r = hsbench({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "allocators")) << r.out;
}

TEST(HsbenchCli, SubcommandHelp) {
  const CommandResult r = hsbench({"allocators", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "--json")) << r.out;
  EXPECT_TRUE(contains(r.out, "--allocator")) << r.out;
  EXPECT_TRUE(contains(r.out, "--only")) << r.out;
}

TEST(HsbenchCli, VersionNamesHsbenchAndItsEngines) {
  const CommandResult r = hsbench({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("hsbench ", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, "\ncommit ")) << r.out;
  EXPECT_TRUE(contains(r.out, "engine ")) << r.out;
  EXPECT_TRUE(contains(r.out, "engine-noprof ")) << r.out;
}

// The lines of a help page's "Options:" or "Positionals:" block that name an option, and the
// subcommands listed by the top-level help.
std::vector<std::string> block_lines(const std::string& help, const std::string& heading) {
  std::vector<std::string> lines;
  std::istringstream in(help);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == heading) {
      inside = true;
    } else if (inside && (line.empty() || line[0] != ' ')) {
      inside = false;
    } else if (inside) {
      lines.push_back(line);
    }
  }
  return lines;
}

// Every subcommand's help serves as its man page: a description, every option and positional
// explained (text after the name column), examples and the exit status.
TEST(HsbenchCli, EverySubcommandHelpDocumentsEachOption) {
  const CommandResult top = hsbench({"--help"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const std::vector<std::string> subs = block_lines(top.out, "Subcommands:");
  ASSERT_GE(subs.size(), 11u) << top.out;
  for (const std::string& entry : subs) {
    std::istringstream words(entry);
    std::string name;
    words >> name;
    std::string description;
    std::getline(words, description);
    EXPECT_NE(description.find_first_not_of(' '), std::string::npos) << name;
    const CommandResult r = hsbench({name, "--help"});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_TRUE(contains(r.out, "\nExamples:\n  hsbench ") ||
                contains(r.out, "\nExamples:\n  LD_PRELOAD="))
        << r.out;
    EXPECT_TRUE(contains(r.out, "\nExit status:\n  0  ")) << r.out;
    std::vector<std::string> options = block_lines(r.out, "Options:");
    const std::vector<std::string> positionals = block_lines(r.out, "Positionals:");
    options.insert(options.end(), positionals.begin(), positionals.end());
    EXPECT_GE(options.size(), 2u) << r.out;
    for (const std::string& line : options) {
      // "  --name TYPE   Text": the name column ends at a run of two or more spaces.
      const std::size_t gap = line.find("  ", 2);
      EXPECT_TRUE(gap != std::string::npos && line.find_first_not_of(' ', gap) != std::string::npos)
          << name << ": undocumented: " << line;
    }
  }
}

TEST(HsbenchCli, UnknownSubcommandFails) {
  const CommandResult r = hsbench({"bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "unknown subcommand")) << r.err;
  EXPECT_TRUE(contains(r.err, "bogus")) << r.err;
  EXPECT_TRUE(contains(r.err, "allocators")) << r.err;
}

TEST(HsbenchCli, MissingSubcommandFails) {
  const CommandResult r = hsbench({});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(r.err.empty());
}

TEST(HsbenchCli, UnknownFlagFails) {
  const CommandResult r = hsbench({"allocators", "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--no-such-flag")) << r.err;
}

TEST(HsbenchCli, UnknownAllocatorIdFails) {
  const CommandResult r = hsbench({"allocators", "--only", "foo"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "'foo'")) << r.err;
  EXPECT_TRUE(contains(r.err, "known ids: engine, engine-noprof")) << r.err;
}

TEST(HsbenchCli, MissingUserLibraryFails) {
  const CommandResult r = hsbench({"allocators", "--allocator", "mine=/nonexistent/libmine.so"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "/nonexistent/libmine.so")) << r.err;
}

TEST(HsbenchCli, JsonListsEveryAllocator) {
  const CommandResult r = hsbench({"allocators", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::vector<std::string> ids;
  std::vector<std::string> opt_in;
  for (const auto& a : j.at("allocators")) {
    ids.push_back(a.at("id"));
    if (a.value("opt_in", false)) opt_in.push_back(a.at("id"));
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"engine", "engine-noprof", "engine-prof", "mimalloc",
                                           "jemalloc", "tcmalloc", "jemalloc-prof", "tcmalloc-full",
                                           "tcmalloc-prof", "glibc"}));
  EXPECT_EQ(opt_in, (std::vector<std::string>{"jemalloc-prof", "tcmalloc-full", "tcmalloc-prof"}));
}

TEST(HsbenchCli, OnlySelectsInOrder) {
  const CommandResult r = hsbench({"allocators", "--json", "--only", "glibc,mimalloc"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("allocators").size(), 2u);
  EXPECT_EQ(j.at("allocators").at(0).at("id"), "glibc");
  EXPECT_TRUE(j.at("allocators").at(1).at("available").get<bool>());
}

TEST(HsbenchCli, TableShowsAvailability) {
  const CommandResult r = hsbench({"allocators", "--only", "jemalloc"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "jemalloc")) << r.out;
  EXPECT_TRUE(contains(r.out, " yes ")) << r.out;
  EXPECT_TRUE(contains(r.out, "libjemalloc2")) << r.out;
}

}  // namespace
}  // namespace heapscope::harness
