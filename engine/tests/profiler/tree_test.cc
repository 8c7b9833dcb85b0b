// Exit profiles of real process trees: tree_child.cc run under LD_PRELOAD=libheapscope.so
// through `timeout`, `sh -c`, fork without exec and a three-process tree, with one inherited
// HEAPSCOPE_PROF_DUMP_AT_EXIT. Every process must leave its own profile (none overwritten) that
// attributes its own functions; a forked child's profile also holds what it inherited.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "behaviour_support.h"
#include "profile_fixture.h"
#include "proto_decoder.h"
#include "reader_support.h"

#if !defined(HS_PRELOAD_LIBRARY) || !defined(HS_TREE_CHILD)
#error "HS_PRELOAD_LIBRARY and HS_TREE_CHILD must name the library and the child program"
#endif

namespace {

using hs_prof_test::read_file;
using hs_prof_test::TempDir;

const std::string kLibrary = HS_PRELOAD_LIBRARY;
const std::string kChild = HS_TREE_CHILD;
constexpr double kMiB = 1024.0 * 1024.0;

const char* const kFunctions[] = {"wrapped_main",       "shell_first",     "shell_second",
                                  "fork_parent_before", "fork_child_only", "fork_parent_after",
                                  "tree_root",          "tree_middle",     "tree_leaf",
                                  "peak_build",         "peak_after"};

// MiB of inuse_space per named function (the innermost frame that is one of kFunctions).
using Attribution = std::map<std::string, double>;

Attribution attribute(const std::string& path, const char* sample_type = "inuse_space") {
  Attribution out;
  hs_test::DecodedProfile profile;
  std::string raw = hs_test::gunzip(read_file(path));
  if (raw.empty() || !hs_test::decode_profile(raw, &profile)) {
    ADD_FAILURE() << "not a gzip profile.proto: " << path;
    return out;
  }
  size_t column = SIZE_MAX;
  for (size_t i = 0; i < profile.sample_types.size(); ++i) {
    if (profile.str(profile.sample_types[i].type) == sample_type) column = i;
  }
  if (column == SIZE_MAX) return out;
  for (const auto& sample : profile.samples) {
    std::string owner;
    for (uint64_t id : sample.location_ids) {
      const auto* location = profile.location(id);
      for (uint64_t fid : location != nullptr ? location->function_ids : std::vector<uint64_t>{}) {
        const auto* function = profile.function(fid);
        if (function == nullptr) continue;
        const std::string& name = profile.str(function->name);
        for (const char* known : kFunctions) {
          if (owner.empty() && name.find(known) != std::string::npos) owner = known;
        }
      }
      if (!owner.empty()) break;
    }
    if (!owner.empty()) out[owner] += static_cast<double>(sample.values[column]) / kMiB;
  }
  return out;
}

// The number between `prefix` and `suffix` in `name`, or 0 when `name` is not of that shape.
long number_between(const std::string& name, const std::string& prefix, const std::string& suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return 0;
  }
  std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::atol(digits.c_str());
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != ".." && name != "stderr") names.push_back(name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Runs `command` (a shell command line) with the profiler preloaded into every process it
// starts and the given HEAPSCOPE_* settings; stderr goes to <dir>/stderr. Returns the status.
int run_tree(const TempDir& dir, const std::string& exit_path, const std::string& command,
             const std::string& more_env = "") {
  std::string line =
      "cd '" + dir.path() + "' && env -i PATH=\"$PATH\" HEAPSCOPE_PROF=1 " +
      "HEAPSCOPE_PROF_SAMPLE_INTERVAL=65536 HEAPSCOPE_PROF_DUMP_FORMAT=proto-symbolized " +
      "HEAPSCOPE_PROF_DUMP_AT_EXIT='" + exit_path + "' " + more_env + " LD_PRELOAD='" + kLibrary +
      "' " + command + " 2>'" + dir.file("stderr") + "'";
  return std::system(line.c_str());
}

// The file among `names` whose profile holds `function`, and that profile; fails unless
// exactly one does.
std::pair<std::string, Attribution> owner_of(const TempDir& dir,
                                             const std::vector<std::string>& names,
                                             const std::string& function) {
  std::pair<std::string, Attribution> found;
  int count = 0;
  for (const std::string& name : names) {
    Attribution a = attribute(dir.file(name));
    if (a.count(function) != 0) {
      found = {name, a};
      ++count;
    }
  }
  EXPECT_EQ(count, 1) << function << " should be in exactly one profile";
  return found;
}

void expect_mib(const Attribution& a, const std::string& function, double mib) {
  auto it = a.find(function);
  ASSERT_NE(it, a.end()) << function;
  EXPECT_GT(it->second, mib * 0.7) << function;
  EXPECT_LT(it->second, mib * 1.3) << function;
}

TEST(ProfTree, WrapperDoesNotOverwriteTheProgramsProfile) {
  TempDir dir;
  ASSERT_EQ(run_tree(dir, "heap.pb.gz", "timeout 60 " + kChild + " leaf wrapped_main 8"), 0);
  std::vector<std::string> names = files_in(dir.path());
  ASSERT_EQ(names.size(), 2u) << read_file(dir.file("stderr"));
  // The program exits first, so it keeps the plain name; the wrapper adds its pid.
  auto [name, profile] = owner_of(dir, names, "wrapped_main");
  EXPECT_EQ(name, "heap.pb.gz");
  expect_mib(profile, "wrapped_main", 8);
  for (const std::string& other : names) {
    if (other != name) {
      EXPECT_GT(number_between(other, "heap.", ".pb.gz"), 0) << other;
    }
  }
}

// Both programs keep their profiles whoever exits last. dash leaves through _exit (no exit
// dump of its own); bash exits normally and writes a third profile, which must not replace
// either program's.
void check_shell(const std::string& shell, size_t shell_profiles) {
  TempDir dir;
  // The trailing builtin keeps the shell from replacing itself with its last command.
  std::string script =
      "'" + kChild + " leaf shell_first 4; " + kChild + " leaf shell_second 6; exit 0'";
  ASSERT_EQ(run_tree(dir, "heap.pb.gz", shell + " -c " + script), 0);
  std::vector<std::string> names = files_in(dir.path());
  ASSERT_EQ(names.size(), 2 + shell_profiles) << read_file(dir.file("stderr"));
  auto first = owner_of(dir, names, "shell_first");
  auto second = owner_of(dir, names, "shell_second");
  EXPECT_EQ(first.first, "heap.pb.gz");
  EXPECT_NE(first.first, second.first);
  expect_mib(first.second, "shell_first", 4);
  expect_mib(second.second, "shell_second", 6);
}

TEST(ProfTree, ShellRunsTwoProgramsAndEveryProcessKeepsItsProfile) {
  // Whether sh writes a profile depends on which shell it is; what matters is the programs'.
  TempDir probe;
  ASSERT_EQ(run_tree(probe, "heap.pb.gz", "sh -c 'exit 0'"), 0);
  check_shell("sh", files_in(probe.path()).size());
  check_shell("bash", 1);
}

TEST(ProfTree, ForkWithoutExecChildInheritsItsParentsSamples) {
  TempDir dir;
  ASSERT_EQ(run_tree(dir, "heap.pb.gz", kChild + " fork"), 0);
  std::vector<std::string> names = files_in(dir.path());
  ASSERT_EQ(names.size(), 2u) << read_file(dir.file("stderr"));
  auto child = owner_of(dir, names, "fork_child_only");
  auto parent = owner_of(dir, names, "fork_parent_after");
  EXPECT_NE(child.first, parent.first);
  expect_mib(child.second, "fork_child_only", 8);
  // The blocks allocated before fork are live in the child's copy of the heap too.
  expect_mib(child.second, "fork_parent_before", 4);
  EXPECT_EQ(child.second.count("fork_parent_after"), 0u);
  expect_mib(parent.second, "fork_parent_after", 6);
  expect_mib(parent.second, "fork_parent_before", 4);
}

TEST(ProfTree, ThreeProcessTreeEachProfileHasOnlyItsOwnFunction) {
  TempDir dir;
  ASSERT_EQ(run_tree(dir, "heap.pb.gz", kChild + " tree " + kChild), 0);
  std::vector<std::string> names = files_in(dir.path());
  ASSERT_EQ(names.size(), 3u) << read_file(dir.file("stderr"));
  const std::pair<const char*, double> kOwn[] = {
      {"tree_root", 5}, {"tree_middle", 7}, {"tree_leaf", 3}};
  for (auto [function, mib] : kOwn) {
    auto [name, profile] = owner_of(dir, names, function);
    expect_mib(profile, function, mib);
    EXPECT_EQ(profile.size(), 1u) << name << " holds another process's function";
  }
}

// 64 MiB built and freed by peak_build, then 8 MiB held by peak_after to exit: the peak
// profile sees the first, the exit profile's in-use view the second and its cumulative view
// both.
TEST(ProfTree, PeakProfileHoldsTheHighWaterMarkAndTheExitProfileWhatIsLeft) {
  TempDir dir;
  ASSERT_EQ(
      run_tree(dir, "heap.pb.gz", kChild + " peak", "HEAPSCOPE_PROF_DUMP_PEAK_AT_EXIT=peak.pb.gz"),
      0);
  ASSERT_EQ(files_in(dir.path()), (std::vector<std::string>{"heap.pb.gz", "peak.pb.gz"}))
      << read_file(dir.file("stderr"));
  Attribution peak = attribute(dir.file("peak.pb.gz"));
  Attribution exit = attribute(dir.file("heap.pb.gz"));
  // A copy is taken every 10% of growth: the kept one holds at least 64 / 1.1 MiB.
  EXPECT_GT(peak["peak_build"], 64 / 1.1 * 0.85);
  EXPECT_LT(peak["peak_build"], 64 * 1.15);
  EXPECT_LT(peak["peak_after"], 1.0);
  expect_mib(exit, "peak_after", 8);
  EXPECT_LT(exit["peak_build"], 0.01) << "nothing of peak_build is in use at exit";
  // The cumulative view, kept by default in a HEAPSCOPE_PROF=1 session, still shows what
  // peak_build allocated: a program that frees its data before exit is not an empty profile.
  Attribution allocated = attribute(dir.file("heap.pb.gz"), "alloc_space");
  EXPECT_GT(allocated["peak_build"], 64 * 0.85);
  EXPECT_LT(allocated["peak_build"], 64 * 1.15);
}

// 12 MiB held with a profile every 2 MiB of in-use growth: numbered files, each later one
// holding more of wrapped_main, bounded by HEAPSCOPE_PROF_DUMP_MAX_FILES.
TEST(ProfTree, NumberedProfilesOverInUseGrowthAreBounded) {
  TempDir dir;
  ASSERT_EQ(run_tree(dir, "", kChild + " leaf wrapped_main 12",
                     "HEAPSCOPE_PROF_DUMP_PREFIX=srv HEAPSCOPE_PROF_DUMP_INUSE_INTERVAL=2097152 "
                     "HEAPSCOPE_PROF_DUMP_MAX_FILES=3"),
            0);
  EXPECT_EQ(files_in(dir.path()),
            (std::vector<std::string>{"srv.0001.pb.gz", "srv.0002.pb.gz", "srv.0003.pb.gz"}));
  std::string err = read_file(dir.file("stderr"));
  EXPECT_NE(err.find("HEAPSCOPE_PROF_DUMP_MAX_FILES reached"), std::string::npos) << err;
  double first = attribute(dir.file("srv.0001.pb.gz"))["wrapped_main"];
  double third = attribute(dir.file("srv.0003.pb.gz"))["wrapped_main"];
  EXPECT_GT(third, first + 3.0);

  // The reader's own difference: go tool pprof -diff_base shows the in-use growth between them.
  if (!hs_test::tool_available("go")) GTEST_SKIP() << "go is not installed";
  hs_test::ScratchDir scratch;
  hs_test::CommandResult diff = scratch.go_pprof("-raw -diff_base='" + dir.file("srv.0001.pb.gz") +
                                                 "' '" + dir.file("srv.0003.pb.gz") + "'");
  ASSERT_EQ(diff.status, 0) << diff.output;
  std::vector<int64_t> totals = hs_test::raw_totals(diff.output);
  ASSERT_EQ(totals.size(), 4u) << diff.output;  // alloc objects/space, inuse objects/space
  EXPECT_GT(static_cast<double>(totals[3]) / kMiB, 3.0) << diff.output;
  EXPECT_LT(static_cast<double>(totals[3]) / kMiB, (third - first) * 1.5) << diff.output;
}

// Numbered file names "<prefix>.NNNN.pb.gz" in `dir`, in order; fails on any other file.
std::vector<long> numbered(const TempDir& dir, const std::string& prefix) {
  std::vector<long> sequence;
  for (const std::string& name : files_in(dir.path())) {
    long n = number_between(name, prefix + ".", ".pb.gz");
    EXPECT_GT(n, 0) << "unexpected file " << name;
    if (n > 0) sequence.push_back(n);
  }
  return sequence;
}

// 16 MiB allocated in 256 KiB blocks with a profile every 4 MiB of (estimated) allocation:
// about four files, numbered from 1, each holding more of wrapped_main than the one before.
TEST(ProfTree, NumberedProfilesEveryAllocatedBytes) {
  TempDir dir;
  ASSERT_EQ(run_tree(dir, "", kChild + " leaf wrapped_main 16",
                     "HEAPSCOPE_PROF_DUMP_PREFIX=alloc HEAPSCOPE_PROF_DUMP_ALLOC_INTERVAL=4194304"),
            0);
  std::vector<long> sequence = numbered(dir, "alloc");
  ASSERT_GE(sequence.size(), 3u) << read_file(dir.file("stderr"));
  ASSERT_LE(sequence.size(), 5u);
  for (size_t i = 0; i < sequence.size(); ++i) EXPECT_EQ(sequence[i], static_cast<long>(i + 1));
  EXPECT_EQ(read_file(dir.file("stderr")), "");
  double first = attribute(dir.file("alloc.0001.pb.gz"))["wrapped_main"];
  double last = attribute(dir.file(files_in(dir.path()).back()))["wrapped_main"];
  EXPECT_GT(last, first + 6.0) << "later profiles hold more of what is allocated";
}

// A program that runs 2.5 s with a profile every second: a file at about 1 s and at about 2 s.
TEST(ProfTree, NumberedProfilesEverySecond) {
  TempDir dir;
  ASSERT_EQ(run_tree(dir, "", kChild + " paced 2500",
                     "HEAPSCOPE_PROF_DUMP_PREFIX=clock HEAPSCOPE_PROF_DUMP_TIME_INTERVAL=1"),
            0);
  std::vector<long> sequence = numbered(dir, "clock");
  EXPECT_GE(sequence.size(), 2u) << read_file(dir.file("stderr"));
  EXPECT_LE(sequence.size(), 3u);
  EXPECT_EQ(read_file(dir.file("stderr")), "");
}

// Every problem with the numbered profiles is one stderr line per process, and the program
// runs on: a directory that does not exist (the first failed file ends the sequence), an
// unknown escape in the prefix (said once, kept as written), a malformed interval.
TEST(ProfTree, IntervalProfileProblemsAreOneLineEach) {
  const std::string every_2_mib = " HEAPSCOPE_PROF_DUMP_INUSE_INTERVAL=2097152";
  TempDir missing;
  ASSERT_EQ(run_tree(missing, "", kChild + " leaf wrapped_main 12",
                     "HEAPSCOPE_PROF_DUMP_PREFIX=no/such/dir/srv" + every_2_mib),
            0);
  EXPECT_EQ(read_file(missing.file("stderr")),
            "heapscope: could not write the interval heap profile to no/such/dir/srv.0001.pb.gz; "
            "no more will be written\n");

  TempDir escape;
  ASSERT_EQ(
      run_tree(escape, "", kChild + " leaf wrapped_main 12",
               "HEAPSCOPE_PROF_DUMP_PREFIX=srv.%q HEAPSCOPE_PROF_DUMP_MAX_FILES=3" + every_2_mib),
      0);
  std::string err = read_file(escape.file("stderr"));
  EXPECT_NE(err.find("unknown % escape in the output path \"srv.%q\""), std::string::npos) << err;
  // That line and the bound's.
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << err;
  EXPECT_EQ(
      files_in(escape.path()),
      (std::vector<std::string>{"srv.%q.0001.pb.gz", "srv.%q.0002.pb.gz", "srv.%q.0003.pb.gz"}));

  TempDir malformed;
  ASSERT_EQ(run_tree(malformed, "", kChild + " leaf wrapped_main 4",
                     "HEAPSCOPE_PROF_DUMP_PREFIX=srv HEAPSCOPE_PROF_DUMP_TIME_INTERVAL=1s"),
            0);
  EXPECT_EQ(read_file(malformed.file("stderr")),
            "heapscope: HEAPSCOPE_PROF_DUMP_TIME_INTERVAL=1s is not a decimal number; ignored\n");
  EXPECT_EQ(files_in(malformed.path()), std::vector<std::string>{});
}

TEST(ProfTree, PidAndProgramNameEscapes) {
  TempDir dir;
  ASSERT_EQ(run_tree(dir, "%e.%p.pb.gz", kChild + " fork"), 0);
  std::vector<std::string> names = files_in(dir.path());
  ASSERT_EQ(names.size(), 2u) << read_file(dir.file("stderr"));
  std::string program = kChild.substr(kChild.rfind('/') + 1);
  for (const std::string& name : names) {
    EXPECT_GT(number_between(name, program + ".", ".pb.gz"), 0) << name;
  }
}

TEST(ProfTree, VerboseExitDumpSaysWhereItWent) {
  TempDir dir;
  ASSERT_EQ(run_tree(dir, "heap.pb.gz", kChild + " leaf wrapped_main 1", "HEAPSCOPE_VERBOSE=1"), 0);
  std::string err = read_file(dir.file("stderr"));
  EXPECT_NE(err.find("heapscope: heap profile at exit written to heap.pb.gz\n"), std::string::npos)
      << err;
  // Without the option the dump is silent.
  TempDir quiet;
  ASSERT_EQ(run_tree(quiet, "heap.pb.gz", kChild + " leaf wrapped_main 1"), 0);
  EXPECT_EQ(read_file(quiet.file("stderr")), "");
}

TEST(ProfTree, BadPathsGetOneLineAndTheProgramRuns) {
  TempDir dir;
  ASSERT_EQ(run_tree(dir, "no/such/dir/heap.pb.gz", kChild + " leaf wrapped_main 1"), 0);
  EXPECT_EQ(read_file(dir.file("stderr")),
            "heapscope: could not write the heap profile at exit to no/such/dir/heap.pb.gz\n");
  TempDir unknown;
  ASSERT_EQ(run_tree(unknown, "heap.%q.pb.gz", kChild + " leaf wrapped_main 1"), 0);
  std::string err = read_file(unknown.file("stderr"));
  EXPECT_NE(err.find("unknown % escape in the output path \"heap.%q.pb.gz\""), std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);
  EXPECT_EQ(files_in(unknown.path()), std::vector<std::string>{"heap.%q.pb.gz"});
}

}  // namespace
