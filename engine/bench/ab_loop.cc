// hs-ab-loop: two or more malloc implementations timed in ONE process, alternating every
// millisecond, for differences of a percent (the stopped profiler's cost is one of those).
//
// Between processes (compare.py, pinned_loop.py) a shared VM's speed drifts by more than a
// percent from one run to the next, so paired rounds seconds apart still scatter by several
// percent. Here every library is dlopen'ed into the same process (RTLD_LOCAL | RTLD_DEEPBIND:
// each one's own malloc, free and TLS, none of them replacing the program's allocator), and
// the measurement is a long series of short blocks: in each block every library runs the same
// malloc(size) / one-byte write / free loop for a fixed number of pairs, in a shuffled order,
// after a short untimed warm-up. Blocks a millisecond apart see the same machine, so the
// per-block ratio to the first library is a tight paired sample.
//
// Where a library's code lands in memory matters too: two identical copies of one library
// file, each in its own page-cache pages, differed by 1-2% at 16 B in every process of a run
// (the same file bytes at other physical addresses, so other cache sets), and by up to 7% in
// an earlier session. A single process, or a fixed file per library, would carry that into
// every comparison of two builds. So the blocks are split over several measuring processes
// (forked one after another), each of which loads a fresh copy of every library file (new
// pages, a new address layout) in an order rotated between processes, so every library is
// loaded first equally often; the placement then varies between processes and the interval
// below includes it. Copies also make naming one file twice an A/A control. Per library the report
// gives the median over processes of each process's median ratio to the first library,
// a 95% percentile-bootstrap interval (processes resampled, then blocks within each), the
// spread of the per-process medians (the layout effect), and the ratio of fastest blocks.
//
//   hs-ab-loop [--sizes 16,64,256,churn,mixed] [--blocks 2000] [--pairs 100000] [--seed N]
//              [--processes N] [--json FILE] [--profile NAME] [--profile-accum NAME]
//              NAME=LIB.so NAME=LIB.so [...]
//
// NAME=system is the allocator this process runs on (glibc's, unless LD_PRELOAD names another):
// no copy, its malloc/free called through the same pointers as the libraries', so glibc can
// be one of the allocators compared. A library with initial-exec TLS (jemalloc) loads only
// with room left for it: GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 (in_process.py
// sets it).
//
// --processes: measuring processes (default 4 per library; rounded up to a multiple of the
// number of libraries so that the load order is balanced).
//
// --profile NAME starts the engine's sampled profiler (hs_prof_start: the interval of
// HEAPSCOPE_PROF_SAMPLE_INTERVAL, else 512 KiB) in that library only; --profile-accum NAME
// starts it keeping cumulative counts as well (what HEAPSCOPE_PROF=1 sessions do by default).
// Every measuring process loads its own copies, so one file named twice is an A/A pair.
#include <dlfcn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_support.h"
#include "heapscope/profile.h"

namespace {

using MallocFn = void* (*)(size_t);
using FreeFn = void (*)(void*);

struct Library {
  std::string name;
  std::string path;
  std::string load_path;  // the measuring process's fresh copy of path
  bool system = false;    // path "system": this process's own malloc/free, nothing loaded
  MallocFn malloc_fn = nullptr;
  FreeFn free_fn = nullptr;
  bool start_profiler = false;     // --profile NAME: hs_prof_start in this library
  bool profile_accum = false;      // --profile-accum NAME: and keep cumulative counts
  std::vector<void*> churn_slots;  // this library's live set for the churn workload
  std::vector<void*> mixed_slots;  // and for the mixed workload
};

// --sizes churn: hs-alloc-bench's churn row (1000 live blocks of 16-512 B; free a random one,
// malloc a random size into its slot). Every library replays the same stream in a block.
constexpr size_t kChurn = SIZE_MAX;
constexpr size_t kChurnSlots = 1000;
// --sizes mixed: hs-alloc-bench's mixed_live row (20 000 live blocks of mixed sizes, 8 B to
// 1 MiB; replace a random one): the page metadata and freed blocks no longer fit in L1/L2.
constexpr size_t kMixed = SIZE_MAX - 1;
constexpr size_t kMixedSlots = 20000;

struct Options {
  std::vector<size_t> sizes = {16, 64, 256};
  size_t blocks = 2000;
  size_t pairs = 100000;
  uint64_t seed = 1;
  size_t processes = 0;  // 0: kProcessesPerLibrary per library
  std::string json_path;
  std::vector<Library> libraries;
  std::vector<std::string> profiled;        // names given to --profile
  std::vector<std::string> profiled_accum;  // names given to --profile-accum
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(
      stderr,
      "hs-ab-loop: %s\nusage: hs-ab-loop [--sizes 16,64,256,churn,mixed] [--blocks N] [--pairs N] "
      "[--seed N] [--processes N] [--json FILE] [--profile NAME] [--profile-accum NAME] "
      "NAME=LIB.so|system NAME=LIB.so [...]\n",
      message.c_str());
  std::exit(2);
}

uint64_t parse_count(const char* flag, const char* text, uint64_t min) {
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || value < min) {
    usage_error(std::string(flag) + " takes a whole number >= " + std::to_string(min) + ", not '" +
                text + "'");
  }
  return value;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--sizes") {
      options.sizes.clear();
      std::string list = value();
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        std::string item = list.substr(start, comma - start);
        options.sizes.push_back(item == "churn"   ? kChurn
                                : item == "mixed" ? kMixed
                                                  : parse_count("--sizes", item.c_str(), 0));
        start = comma + 1;
      }
    } else if (arg == "--blocks") {
      options.blocks = parse_count("--blocks", value(), 2);
    } else if (arg == "--pairs") {
      options.pairs = parse_count("--pairs", value(), 1);
    } else if (arg == "--seed") {
      options.seed = parse_count("--seed", value(), 0);
    } else if (arg == "--processes") {
      options.processes = parse_count("--processes", value(), 1);
    } else if (arg == "--json") {
      options.json_path = value();
    } else if (arg == "--profile") {
      options.profiled.push_back(value());
    } else if (arg == "--profile-accum") {
      options.profiled_accum.push_back(value());
    } else if (arg.rfind("--", 0) == 0) {
      usage_error("unknown flag " + arg);
    } else {
      size_t equals = arg.find('=');
      if (equals == std::string::npos || equals == 0 || equals + 1 == arg.size()) {
        usage_error("libraries are NAME=PATH, not '" + arg + "'");
      }
      Library library;
      library.name = arg.substr(0, equals);
      library.path = arg.substr(equals + 1);
      library.system = library.path == "system";
      options.libraries.push_back(std::move(library));
    }
  }
  if (options.libraries.size() < 2) usage_error("name at least two libraries to compare");
  for (bool accum : {false, true}) {
    for (const std::string& name : accum ? options.profiled_accum : options.profiled) {
      auto named = [&](const Library& library) { return library.name == name; };
      auto it = std::find_if(options.libraries.begin(), options.libraries.end(), named);
      if (it == options.libraries.end()) {
        usage_error(std::string(accum ? "--profile-accum" : "--profile") +
                    " names no library: " + name);
      }
      if (it->system) usage_error("the system allocator has no profiler to start: " + name);
      it->start_profiler = true;
      it->profile_accum = it->profile_accum || accum;
    }
  }
  return options;
}

// False (after a message) when the library cannot be used.
bool load(Library& library) {
  if (library.system) {
    library.malloc_fn = &std::malloc;
    library.free_fn = &std::free;
    return true;
  }
  // DEEPBIND: the library's own references to malloc/free bind inside it, not to the
  // program's allocator (glibc) that the global scope would give them.
  void* handle = dlopen(library.load_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (handle == nullptr) {
    // The copy sits in $TMPDIR (else /tmp): a directory mounted noexec refuses to map it.
    const char* error = dlerror();
    std::fprintf(stderr,
                 "hs-ab-loop: cannot load %s (copied to %s): %s\n"
                 "hs-ab-loop: if that directory is mounted noexec, set TMPDIR to one that is not\n",
                 library.path.c_str(), library.load_path.c_str(), error);
    if (error != nullptr && std::strstr(error, "static TLS") != nullptr) {
      std::fprintf(stderr,
                   "hs-ab-loop: it uses initial-exec TLS: run with "
                   "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384\n");
    }
    return false;
  }
  library.malloc_fn = reinterpret_cast<MallocFn>(dlsym(handle, "malloc"));
  library.free_fn = reinterpret_cast<FreeFn>(dlsym(handle, "free"));
  if (library.malloc_fn == nullptr || library.free_fn == nullptr) {
    std::fprintf(stderr, "hs-ab-loop: %s exports no malloc/free\n", library.path.c_str());
    return false;
  }
  if (library.start_profiler) {
    // The engine's sampled profiler: HEAPSCOPE_PROF_SAMPLE_INTERVAL, else 512 KiB.
    using StartFn = bool (*)(size_t);
    using StartExFn = bool (*)(const hs_prof_config_t*);
    auto start = reinterpret_cast<StartFn>(dlsym(handle, "hs_prof_start"));
    auto start_ex = reinterpret_cast<StartExFn>(dlsym(handle, "hs_prof_start_ex"));
    hs_prof_config_t config = HS_PROF_CONFIG_INIT;
    config.fields = config.override_fields = HS_PROF_FIELD_ACCUM;
    config.accum = 1;
    bool started = library.profile_accum ? start_ex != nullptr && start_ex(&config)
                                         : start != nullptr && start(0);
    if (!started) {
      std::fprintf(stderr, "hs-ab-loop: cannot start the profiler of %s\n", library.path.c_str());
      return false;
    }
  }
  // The symbols must be the library's own, not glibc's found through its dependencies.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(library.malloc_fn), &info) == 0 || info.dli_fname == nullptr ||
      std::strstr(info.dli_fname, "libc.so") != nullptr) {
    std::fprintf(stderr, "hs-ab-loop: %s does not define malloc itself\n", library.path.c_str());
    return false;
  }
  return true;
}

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// The loop every library runs: the same as pinned_loop.py's and hs-alloc-bench's pair rows.
[[gnu::noinline]] uint64_t run_pairs(const Library& library, size_t size, size_t pairs) {
  uint64_t start = now_ns();
  for (size_t i = 0; i < pairs; ++i) {
    void* p = library.malloc_fn(size);
    *static_cast<volatile char*>(p) = 1;
    library.free_fn(p);
  }
  return now_ns() - start;
}

size_t churn_size(hs_bench::SplitMix64& rng) { return rng.between(16, 512); }

// Free a random block of the library's live set, malloc one in its place (sizes from
// size_of), touching its first byte. The live set is filled on first use, the same for all.
template <size_t (*size_of)(hs_bench::SplitMix64&)>
[[gnu::noinline]] uint64_t run_live_set(Library& library, std::vector<void*>& slots, size_t count,
                                        size_t ops, uint64_t stream_seed) {
  if (slots.empty()) {
    hs_bench::SplitMix64 fill(0x5eed);
    for (size_t k = 0; k < count; ++k) slots.push_back(library.malloc_fn(size_of(fill)));
  }
  hs_bench::SplitMix64 rng(stream_seed);
  uint64_t start = now_ns();
  for (size_t i = 0; i < ops; ++i) {
    size_t k = rng.between(0, count - 1);
    library.free_fn(slots[k]);
    void* p = library.malloc_fn(size_of(rng));
    *static_cast<volatile char*>(p) = 1;
    slots[k] = p;
  }
  return now_ns() - start;
}

// One timed run of the workload: `size` pairs, or live-set ops from the block's stream.
uint64_t run_block(Library& library, size_t size, size_t ops, uint64_t stream_seed) {
  if (size == kChurn) {
    return run_live_set<churn_size>(library, library.churn_slots, kChurnSlots, ops, stream_seed);
  }
  if (size == kMixed) {
    return run_live_set<hs_bench::mixed_size>(library, library.mixed_slots, kMixedSlots, ops,
                                              stream_seed);
  }
  return run_pairs(library, size, ops);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

constexpr size_t kProcessesPerLibrary = 4;

// What one measuring process runs: the libraries loaded in an order rotated by `process`,
// blocks [first_block, first_block + blocks) of every workload, each library's ns per op
// written to fd (workload by workload, library by library in command-line order).
[[noreturn]] void run_measuring_process(Options& options, size_t process, size_t first_block,
                                        size_t blocks, int fd) {
  const size_t count = options.libraries.size();
  const char* tmp = std::getenv("TMPDIR");
  std::string dir =
      std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/hs-ab-loop.XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    std::fprintf(stderr, "hs-ab-loop: cannot make a directory %s: %s\n", dir.c_str(),
                 std::strerror(errno));
    _exit(1);
  }
  // Written (new pages allocated) and loaded in the rotated order: where the pages and the
  // mappings land depends on both.
  bool ready = true;
  for (size_t i = 0; i < count && ready; ++i) {
    const size_t k = (process + i) % count;
    Library& library = options.libraries[k];
    if (library.system) continue;
    library.load_path = dir + "/" + std::to_string(k) + ".so";
    std::ifstream in(library.path, std::ios::binary);
    std::ofstream out(library.load_path, std::ios::binary);
    if (in && out) out << in.rdbuf();
    if (!in || !out.flush()) {
      std::fprintf(stderr, "hs-ab-loop: cannot copy %s to %s\n", library.path.c_str(),
                   library.load_path.c_str());
      ready = false;
    }
  }
  for (size_t i = 0; i < count && ready; ++i)
    ready = load(options.libraries[(process + i) % count]);
  // Mapped copies need no names: nothing is left behind, whatever happened.
  for (const Library& library : options.libraries) {
    if (!library.load_path.empty()) unlink(library.load_path.c_str());
  }
  rmdir(dir.c_str());
  if (!ready) _exit(1);
  hs_bench::SplitMix64 order_rng(options.seed ^ (0x9e3779b97f4a7c15ULL * (process + 1)));
  std::vector<size_t> order(count);
  std::vector<double> ns(count * blocks);
  for (const size_t size : options.sizes) {
    const size_t warmup = std::max<size_t>(options.pairs / 20, 100);
    for (size_t b = 0; b < blocks; ++b) {
      for (size_t k = 0; k < count; ++k) order[k] = k;
      for (size_t k = count - 1; k > 0; --k) std::swap(order[k], order[order_rng.between(0, k)]);
      // The same stream for every library in a block, and per block the same in every run.
      const uint64_t stream = options.seed * 0x9e3779b97f4a7c15ULL + first_block + b;
      for (size_t k : order) {
        Library& library = options.libraries[k];
        run_block(library, size, warmup, ~stream);
        ns[k * blocks + b] = static_cast<double>(run_block(library, size, options.pairs, stream)) /
                             static_cast<double>(options.pairs);
      }
    }
    const char* bytes = reinterpret_cast<const char*>(ns.data());
    size_t left = ns.size() * sizeof(double);
    while (left > 0) {
      ssize_t written = write(fd, bytes, left);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) _exit(1);
      bytes += written;
      left -= static_cast<size_t>(written);
    }
  }
  _exit(0);
}

// Per workload: ns[k] every block's ns per op of library k, process_of[b] the process that
// ran block b.
struct Measured {
  std::vector<std::vector<double>> ns;
  std::vector<uint32_t> process_of;
};

// Forks the measuring processes one after another and gathers their blocks; false (after a
// message) when one fails.
bool measure(Options& options, size_t processes, size_t blocks_per_process,
             std::vector<Measured>& measured) {
  const size_t count = options.libraries.size();
  measured.assign(options.sizes.size(), Measured{});
  for (Measured& m : measured) m.ns.assign(count, {});
  std::fflush(stdout);  // a child must not write the parent's buffered output again
  std::fflush(stderr);
  for (size_t p = 0; p < processes; ++p) {
    int fds[2];
    if (pipe(fds) != 0) {
      std::fprintf(stderr, "hs-ab-loop: pipe: %s\n", std::strerror(errno));
      return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
      std::fprintf(stderr, "hs-ab-loop: fork: %s\n", std::strerror(errno));
      return false;
    }
    if (pid == 0) {
      close(fds[0]);
      run_measuring_process(options, p, p * blocks_per_process, blocks_per_process, fds[1]);
    }
    close(fds[1]);
    std::vector<double> values(options.sizes.size() * count * blocks_per_process);
    char* bytes = reinterpret_cast<char*>(values.data());
    const size_t wanted = values.size() * sizeof(double);
    size_t got = 0;
    while (got < wanted) {
      ssize_t n = read(fds[0], bytes + got, wanted - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != wanted) {
      std::fprintf(stderr, "hs-ab-loop: measuring process %zu of %zu failed (%s %d)\n", p + 1,
                   processes, WIFSIGNALED(status) ? "signal" : "exit status",
                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
      return false;
    }
    for (size_t s = 0; s < options.sizes.size(); ++s) {
      const double* at = values.data() + s * count * blocks_per_process;
      for (size_t k = 0; k < count; ++k) {
        measured[s].ns[k].insert(measured[s].ns[k].end(), at + k * blocks_per_process,
                                 at + (k + 1) * blocks_per_process);
      }
      measured[s].process_of.insert(measured[s].process_of.end(), blocks_per_process,
                                    static_cast<uint32_t>(p));
    }
  }
  return true;
}

struct RatioEstimate {
  double ratio;       // the median over processes of each one's median paired ratio
  double low, high;   // its 95% bootstrap interval
  double spread_low;  // the smallest and largest per-process median: the placement effect
  double spread_high;
};

// ratios[p]: the per-block ratios measured in process p. The median over processes, not a
// mean: now and then one process in a dozen runs a library several percent (at churn up to
// 2x) off the others, and a mean carried that into an A/A pair's estimate. Two-stage
// percentile bootstrap: processes resampled, then blocks within each chosen process.
RatioEstimate estimate_ratio(const std::vector<std::vector<double>>& ratios, uint64_t seed) {
  constexpr size_t kResamples = 2000;
  const size_t processes = ratios.size();
  std::vector<double> per_process(processes);
  for (size_t p = 0; p < processes; ++p) per_process[p] = median(ratios[p]);
  RatioEstimate estimate{};
  estimate.ratio = median(per_process);
  estimate.spread_low = *std::min_element(per_process.begin(), per_process.end());
  estimate.spread_high = *std::max_element(per_process.begin(), per_process.end());
  hs_bench::SplitMix64 rng(seed);
  std::vector<double> medians;
  medians.reserve(kResamples);
  std::vector<double> sample;
  std::vector<double> resampled(processes);
  for (size_t r = 0; r < kResamples; ++r) {
    for (double& m : resampled) {
      const std::vector<double>& chosen = ratios[rng.between(0, processes - 1)];
      sample.resize(chosen.size());
      for (double& v : sample) v = chosen[rng.between(0, chosen.size() - 1)];
      m = median(sample);
    }
    medians.push_back(median(resampled));
  }
  std::sort(medians.begin(), medians.end());
  estimate.low = medians[kResamples * 25 / 1000];
  estimate.high = medians[kResamples * 975 / 1000 - 1];
  return estimate;
}

int run(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  const size_t count = options.libraries.size();
  size_t processes = options.processes != 0 ? options.processes : kProcessesPerLibrary * count;
  processes = (processes + count - 1) / count * count;  // each library loaded first equally often
  const size_t blocks_per_process = (options.blocks + processes - 1) / processes;
  const size_t blocks = blocks_per_process * processes;
  nlohmann::json report = {{"pairs_per_block", options.pairs},
                           {"blocks", blocks},
                           {"processes", processes},
                           {"seed", options.seed},
                           {"sizes", nlohmann::json::array()}};
  std::printf(
      "hs-ab-loop: %zu blocks of %zu ops per library and workload, in %zu processes with the "
      "load order rotated, order shuffled per block (seed %llu); ns per op (a malloc/free "
      "pair)\n",
      blocks, options.pairs, processes, static_cast<unsigned long long>(options.seed));
  std::vector<Measured> measured;
  if (!measure(options, processes, blocks_per_process, measured)) return 1;
  for (size_t s = 0; s < options.sizes.size(); ++s) {
    const size_t size = options.sizes[s];
    const std::vector<std::vector<double>>& ns = measured[s].ns;
    std::string label = size == kChurn   ? "churn (1000 live blocks of 16-512 B)"
                        : size == kMixed ? "mixed (20000 live blocks of 8 B-1 MiB)"
                                         : std::to_string(size) + " B";
    std::printf("\n%s\n  %-16s %8s %8s   %-34s %-20s %s\n", label.c_str(), "library", "fastest",
                "median", "paired ratio to first [95% CI]", "per-process range", "fastest/fastest");
    const char* workload = size == kChurn ? "churn" : size == kMixed ? "mixed" : "pair";
    nlohmann::json size_report = {{"workload", workload},
                                  {"process_of_block", measured[s].process_of},
                                  {"libraries", nlohmann::json::array()}};
    if (size != kChurn && size != kMixed) size_report["size"] = size;
    for (size_t k = 0; k < count; ++k) {
      const double fastest = *std::min_element(ns[k].begin(), ns[k].end());
      std::printf("  %-16s %8.3f %8.3f", options.libraries[k].name.c_str(), fastest, median(ns[k]));
      nlohmann::json library_report = {{"name", options.libraries[k].name},
                                       {"path", options.libraries[k].path},
                                       {"ns_per_pair", ns[k]}};
      if (k > 0) {
        std::vector<std::vector<double>> ratios(processes);
        for (size_t b = 0; b < blocks; ++b) {
          ratios[measured[s].process_of[b]].push_back(ns[k][b] / ns[0][b]);
        }
        const RatioEstimate e = estimate_ratio(ratios, options.seed ^ (size * 131 + k));
        const double fastest_first = *std::min_element(ns[0].begin(), ns[0].end());
        std::printf("   %.4f [%.4f, %.4f]%12s [%.4f, %.4f] %.4f", e.ratio, e.low, e.high, "",
                    e.spread_low, e.spread_high, fastest / fastest_first);
        library_report["ratio_to_first"] = {{"estimate", e.ratio},
                                            {"ci95", {e.low, e.high}},
                                            {"per_process_range", {e.spread_low, e.spread_high}}};
      }
      std::printf("\n");
      size_report["libraries"].push_back(std::move(library_report));
    }
    report["sizes"].push_back(std::move(size_report));
    std::fflush(stdout);
  }
  if (!options.json_path.empty()) {
    std::ofstream out(options.json_path);
    out << report.dump(1) << "\n";
    if (!out) {
      std::fprintf(stderr, "hs-ab-loop: cannot write %s\n", options.json_path.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // the JSON report's allocations
    std::fprintf(stderr, "hs-ab-loop: %s\n", e.what());
    return 1;
  }
}
