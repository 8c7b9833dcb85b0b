#include "harness/app/app_probe.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/app/app_sample_runner.h"
#include "harness/app/app_spec.h"
#include "harness/registry/engine_libraries.h"

namespace heapscope::harness {
namespace {

constexpr std::size_t kMaxRecordedImages = 50;  // per allocator, in the raw run

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return a == b;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string joined(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The probe-run environment: the sample's, with the shim in front of the allocator.
std::vector<std::string> probe_environment(const AppProbeRequest& r, const AllocatorInfo& info,
                                           const std::string& records) {
  std::vector<std::string> env = app_child_environment(r.base_env, child_environment(info));
  std::string preload = r.shim;
  for (std::string& e : env) {
    if (e.rfind("LD_PRELOAD=", 0) == 0) {
      preload += ":" + e.substr(11);
      e.clear();
    }
  }
  std::erase_if(env, [](const std::string& e) { return e.empty(); });
  env.push_back("LD_PRELOAD=" + preload);
  env.push_back("HEAPSCOPE_APP_PROBE_OUT=" + records);
  return env;
}

AllocatorProbe probe_one(const AppProbeRequest& r, const AllocatorInfo& info) {
  AllocatorProbe ap;
  ap.allocator = info.spec.id;
  ap.expected_object = info.resolved_path;
  std::error_code ec;
  std::string records =
      (std::filesystem::temp_directory_path(ec) / "hsbench-app-probe-XXXXXX").string();
  const int fd = mkstemp(records.data());
  if (fd >= 0) close(fd);

  std::vector<std::string> env = probe_environment(r, info, records);
  const AppRunResult result = r.run ? r.run(env)
                                    : run_app_command({r.executable, r.argv, std::move(env), r.cwd,
                                                       r.stdin_path, r.timeout_seconds});
  ap.run_outcome = result.ok ? "ok" : result.kind + ": " + result.reason;
  ap.images = parse_probe_records(read_text(records));
  unlink(records.c_str());

  const ProbedImage* wrong = nullptr;
  std::size_t checked = 0;
  for (const ProbedImage& img : ap.images) {
    ap.allocs += img.allocs;
    if (img.self_served) continue;
    ++checked;
    if (wrong == nullptr && !same_file(img.malloc_object, ap.expected_object)) wrong = &img;
  }
  if (ap.images.empty()) {
    ap.problem = "no process of the command loaded the preloaded libraries";
  } else if (checked == 0) {
    ap.problem = "every traced program defines malloc itself";
  } else if (wrong != nullptr) {
    ap.problem = "in " + wrong->exe + " (pid " + std::to_string(wrong->pid) +
                 ") malloc is served by " + wrong->malloc_object + ", not " + ap.expected_object;
  }
  ap.serves = ap.problem.empty();
  return ap;
}

std::string kind_of_file(const ProgramFile& f) {
  if (f.setuid && f.setgid) return "set-uid and set-gid";
  if (f.setuid) return "set-uid";
  if (f.setgid) return "set-gid";
  return "privileged (file capabilities)";
}

// Why nothing loaded the preload, from the static evidence.
std::string no_preload_explanation(const std::vector<ProgramFile>& chain) {
  const ProgramFile& runs = chain.back();
  if (runs.elf && !runs.dynamic) {
    return runs.path + " is statically linked" +
           (runs.go ? " (a Go program: its runtime allocates with mmap itself)" : "") +
           "; its ELF has no program interpreter, so the dynamic loader never runs and "
           "LD_PRELOAD cannot replace its malloc. Every allocator would measure the allocator "
           "built into the program; no comparison is possible.";
  }
  for (const ProgramFile& f : chain) {
    if (f.secure_exec) {
      return f.path + " is " + kind_of_file(f) +
             ": the loader starts it in secure mode and ignores LD_PRELOAD paths, so every "
             "allocator would measure glibc's malloc; no comparison is possible.";
    }
  }
  if (runs.go) {
    return runs.path + " is a Go program and loaded no preload: no comparison is possible.";
  }
  return "no process of the command loaded the preloaded library: it may clear LD_PRELOAD "
         "before doing its work, or hand the work to a process outside this process tree.";
}

void add_verdict(AppProbeReport& rep) {
  const ProgramFile& runs = rep.chain.back();
  if (!rep.chain.front().error.empty()) {
    rep.blocked = true;
    rep.problems.push_back("cannot run " + rep.chain.front().path + ": " + rep.chain.front().error);
    return;
  }
  for (std::size_t i = 1; i < rep.chain.size(); ++i) {
    rep.notes.push_back(rep.chain[i - 1].path + " is a script run by " + rep.chain[i].path +
                        "; the interpreter's processes are the ones measured.");
  }
  if (rep.allocators.empty()) {
    rep.blocked = true;
    rep.problems.push_back("no allocator of the selection is available, so nothing was probed.");
    return;
  }
  const bool any_images = std::any_of(rep.allocators.begin(), rep.allocators.end(),
                                      [](const AllocatorProbe& a) { return !a.images.empty(); });
  if (!any_images) {
    rep.blocked = true;
    rep.problems.push_back(no_preload_explanation(rep.chain));
    return;
  }
  // Facts from the run with the most images (normally every run sees the same programs).
  const AllocatorProbe& fullest = *std::max_element(
      rep.allocators.begin(), rep.allocators.end(),
      [](const auto& a, const auto& b) { return a.images.size() < b.images.size(); });
  std::set<std::string> programs;
  std::set<std::string> self_served;
  for (const ProbedImage& img : fullest.images) {
    programs.insert(base_name(img.exe));
    if (img.self_served) self_served.insert(img.exe);
  }
  const std::string symbols = runs.allocator_symbols.empty()
                                  ? std::string()
                                  : " (" + joined(runs.allocator_symbols, "; ") + ")";
  if (self_served.size() == programs.size()) {
    rep.blocked = true;
    rep.problems.push_back(
        joined({self_served.begin(), self_served.end()}, ", ") + " defines malloc itself" +
        symbols +
        ", so it wins symbol lookup over any preloaded library: the program brings its own "
        "allocator, and every column would measure that allocator; no comparison is possible.");
    return;
  }
  if (!self_served.empty()) {
    rep.notes.push_back(joined({self_served.begin(), self_served.end()}, ", ") +
                        " define(s) malloc itself: only the other programs' allocations change "
                        "with the allocator.");
  }
  if (programs.size() > 1) {
    rep.notes.push_back("the command ran " + std::to_string(fullest.images.size()) +
                        " program images (" + joined({programs.begin(), programs.end()}, ", ") +
                        "): a shell or driver that starts other programs. The preload reached "
                        "each of them, and all of them count: time and RSS are of the whole "
                        "process tree.");
  }
  std::uint64_t most_allocs = 0;
  for (const AllocatorProbe& a : rep.allocators) most_allocs = std::max(most_allocs, a.allocs);
  if (most_allocs < kFewAllocationCalls) {
    rep.blocked = true;
    std::string why = "the command made only " + std::to_string(most_allocs) +
                      " malloc-family calls in its whole run: ";
    if (runs.go) {
      why += runs.path +
             " is a Go program, whose runtime allocates with mmap itself (malloc only "
             "serves cgo code)";
    } else if (!runs.allocator_symbols.empty()) {
      why += runs.path + " brings its own allocator" + symbols;
    } else {
      why +=
          "it either brings its own allocator (a Go program, a Rust binary with a global "
          "allocator) or hardly allocates";
    }
    why += ". Whichever malloc is preloaded cannot change its run measurably.";
    rep.problems.push_back(why);
  } else if (runs.go || !runs.allocator_symbols.empty()) {
    rep.notes.push_back(runs.path + (runs.go ? " is a Go program" : " has allocator symbols") +
                        symbols + ", but it made " + std::to_string(most_allocs) +
                        " malloc-family calls, so malloc does serve part of its allocations.");
  }
  if (!runs.imported_allocator_api.empty()) {
    rep.notes.push_back(
        runs.path + " imports allocator-specific functions (" +
        joined(runs.imported_allocator_api, ", ") +
        ") from the allocator it is linked with: a preload replaces malloc, free, realloc, "
        "calloc and the other standard entry points, but these calls still reach that linked "
        "library under every allocator, and without a preload the linked library, not glibc, "
        "serves malloc.");
  }
  for (const ProgramFile& f : rep.chain) {
    if ((f.setuid || f.setgid) && !f.secure_exec) {
      rep.notes.push_back(f.path + " is " + kind_of_file(f) +
                          " to you, so the loader honours LD_PRELOAD here; for other users it "
                          "would not.");
    }
  }
  std::size_t serving = 0;
  for (const AllocatorProbe& a : rep.allocators) {
    if (a.serves) {
      ++serving;
    } else {
      rep.notes.push_back("allocator " + a.allocator + " excluded: " + a.problem);
    }
  }
  if (serving == 0) {
    rep.blocked = true;
    rep.problems.push_back("no allocator serves malloc in the command's processes.");
  }
}

}  // namespace

std::string app_probe_shim_path() {
  return private_file("HEAPSCOPE_APP_PROBE_SHIM",
                      std::string(HS_INSTALL_LIBEXECDIR) + "/heapscope/libhs_app_probe_shim.so",
                      HS_APP_PROBE_SHIM);
}

std::vector<ProbedImage> parse_probe_records(const std::string& text) {
  std::vector<ProbedImage> images;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::size_t start = 0;
    for (int i = 0; i < 6; ++i) {
      const std::size_t tab = line.find('\t', start);
      if (tab == std::string::npos) break;
      f.push_back(line.substr(start, tab - start));
      start = tab + 1;
    }
    if (f.size() != 6) continue;  // a torn or foreign line
    f.push_back(line.substr(start));
    ProbedImage img;
    img.pid = std::atoi(f[1].c_str());
    img.ppid = std::atoi(f[2].c_str());
    img.allocs = std::strtoull(f[3].c_str(), nullptr, 10);
    img.malloc_object = f[5];
    img.exe = f[6];
    img.self_served = same_file(img.malloc_object, img.exe);
    if (f[0] == "start") {
      img.allocs = 0;
      images.push_back(img);
      continue;
    }
    if (f[0] != "exit") continue;
    // The exit of the latest image of this pid; else a forked child that never exec'ed.
    auto it = std::find_if(images.rbegin(), images.rend(), [&](const ProbedImage& p) {
      return p.pid == img.pid && !p.exited && p.exe == img.exe;
    });
    if (it != images.rend()) {
      it->allocs = img.allocs;
      it->exited = true;
    } else {
      img.exited = true;
      images.push_back(img);
    }
  }
  return images;
}

AppProbeReport probe_application(const AppProbeRequest& request,
                                 const std::vector<AllocatorInfo>& allocators) {
  AppProbeReport rep;
  rep.chain = inspect_program_chain(request.executable);
  if (rep.chain.front().error.empty()) {
    for (const AllocatorInfo& info : allocators) {
      if (app_interrupt_requested()) break;  // the caller reports the interruption
      if (info.available) rep.allocators.push_back(probe_one(request, info));
    }
  }
  add_verdict(rep);
  return rep;
}

nlohmann::ordered_json app_probe_to_json(const AppProbeReport& rep) {
  using J = nlohmann::ordered_json;
  J program = J::array();
  for (const ProgramFile& f : rep.chain) {
    J j{{"path", f.path},
        {"script", f.script},
        {"interpreter", f.interpreter},
        {"elf", f.elf},
        {"dynamic", f.dynamic},
        {"setuid", f.setuid},
        {"setgid", f.setgid},
        {"capabilities", f.capabilities},
        {"secure_exec", f.secure_exec},
        {"go", f.go},
        {"allocator_symbols", f.allocator_symbols},
        {"imported_allocator_api", f.imported_allocator_api}};
    if (!f.error.empty()) j["error"] = f.error;
    program.push_back(j);
  }
  J allocs = J::array();
  for (const AllocatorProbe& a : rep.allocators) {
    J images = J::array();
    for (std::size_t i = 0; i < a.images.size() && i < kMaxRecordedImages; ++i) {
      const ProbedImage& img = a.images[i];
      images.push_back({{"pid", img.pid},
                        {"ppid", img.ppid},
                        {"exe", img.exe},
                        {"malloc_object", img.malloc_object},
                        {"allocs", img.allocs},
                        {"exited", img.exited},
                        {"self_served", img.self_served}});
    }
    allocs.push_back({{"id", a.allocator},
                      {"expected_object", a.expected_object},
                      {"run", a.run_outcome},
                      {"serves_malloc", a.serves},
                      {"problem", a.problem},
                      {"malloc_calls", a.allocs},
                      {"images_total", a.images.size()},
                      {"images", images}});
  }
  return {{"program", program},
          {"allocators", allocs},
          {"blocked", rep.blocked},
          {"problems", rep.problems},
          {"notes", rep.notes}};
}

std::string describe_probe(const AppProbeReport& rep) {
  std::string out;
  for (const AllocatorProbe& a : rep.allocators) {
    std::set<std::string> objects;
    for (const ProbedImage& img : a.images) objects.insert(base_name(img.malloc_object));
    out += "probe: " + a.allocator + ": " + std::to_string(a.images.size()) +
           " program image(s), " + std::to_string(a.allocs) + " malloc calls, malloc served by " +
           (objects.empty() ? std::string("-") : joined({objects.begin(), objects.end()}, ", ")) +
           (a.serves ? " (ok)" : " -- " + a.problem) +
           (a.run_outcome == "ok" ? "" : "; probe run " + a.run_outcome) + "\n";
  }
  for (const std::string& p : rep.problems) out += "PROBLEM: " + p + "\n";
  for (const std::string& n : rep.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace heapscope::harness
