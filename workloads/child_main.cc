// hs-workload: runs ONE workload at one thread count under whatever allocator this
// process has (glibc, or an LD_PRELOADed library) and prints ONE JSON line.
//
// Exit codes: 0 ok; 2 bad flags / unknown workload; 3 not running on --expect-allocator;
// 4 ran, but allocations failed or the verify pass found corrupted contents; 5 the memory
// handshake with the parent broke (--memory-fd).
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "probe/allocator_probe.h"
#include "stats/log_linear_histogram.h"
#include "workloads/runner.h"
#include "workloads/workload.h"

namespace wl = heapscope::workloads;
using Json = nlohmann::ordered_json;

namespace {

struct Identity {  // NOLINT(bugprone-exception-escape): implicit members of a json holder
  Json json;
  bool matches = true;
  std::string why;
};

Identity probe_allocator(const std::string& expected_path) {
  namespace probe = heapscope::probe;
  Identity id;
  const probe::AllocatorIdentity a = probe::identify_allocator();
  id.json = Json{{"id", probe::allocator_id_for_object(a.malloc_object)},
                 {"malloc_object", a.malloc_object},
                 {"free_object", a.free_object},
                 {"realloc_object", a.realloc_object},
                 {"calloc_object", a.calloc_object},
                 {"consistent", a.consistent}};
  if (!expected_path.empty()) id.matches = probe::matches_expected(a, expected_path, &id.why);
  return id;
}

// This process's peak RSS: VmHWM from /proc, ru_maxrss only where /proc cannot be read. The
// latter covers the process's life before exec too (spawned by hsbench, it started as a copy
// of hsbench), and Linux 6.2 and later fill it from per-CPU counters without summing them.
std::uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string known_workloads() {
  std::string s;
  for (const auto& w : wl::all_workloads()) s += (s.empty() ? "" : ", ") + std::string(w.name);
  return s;
}

Json workload_table() {
  Json rows = Json::array();
  for (const auto& w : wl::all_workloads()) {
    rows.push_back(Json{{"name", w.name},
                        {"summary", w.summary},
                        {"sizes", w.sizes},
                        {"op_mix", w.op_mix},
                        {"live_set", w.live_set},
                        {"threads", w.threads_note}});
  }
  return rows;
}

Json calls_json(const wl::CallCounts& c) {
  return Json{{"malloc", c.malloc}, {"free", c.free},       {"realloc", c.realloc},
              {"calloc", c.calloc}, {"aligned", c.aligned}, {"total", c.total()}};
}

// The merged open-loop histogram: quantiles of (completion - intended start), in ns.
Json latency_json(const heapscope::stats::LogLinearHistogram& h, double rate) {
  return Json{{"method", "open-loop-intended-start-v1"},
              {"clock", "clock_gettime-monotonic"},
              {"histogram", heapscope::stats::kLogLinearHistogramMethod},
              {"rate_ops_per_sec", rate},
              {"count", h.count()},
              {"p50_ns", h.quantile(0.5)},
              {"p99_ns", h.quantile(0.99)},
              {"p999_ns", h.quantile(0.999)},
              {"max_ns", h.max()}};
}

int run(int argc, char** argv) {
  CLI::App app{"Run one heapscope workload under this process's allocator; prints one JSON line.",
               "hs-workload"};
  std::string workload, expect;
  unsigned threads = 1;
  std::uint64_t ops = 0, seed = 0, block = 0;
  bool verify = false, plant = false, list = false;
  int memory_fd = -1;
  std::optional<double> latency_rate;
  app.add_option("--workload", workload, "workload name (see --list)");
  app.add_option("--threads", threads, "worker threads")->check(CLI::Range(1u, wl::kMaxThreads));
  app.add_option("--ops", ops, "allocator calls in the timed region (whole cell)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 36));
  app.add_option("--seed", seed, "campaign seed");
  app.add_option("--block", block, "block number (part of the stream seed)");
  app.add_flag("--verify", verify, "untimed second pass checking every block's contents");
  app.add_option("--expect-allocator", expect,
                 "shared object that must serve malloc/free/realloc/calloc, else exit 3");
  app.add_option("--memory-fd", memory_fd,
                 "socket to the parent that samples this process's memory "
                 "(harness/docs/protocol.md#memory)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--latency-rate", latency_rate,
                 "open-loop per-operation latency: stream ops per second for the whole cell, "
                 "0 = unthrottled (harness/docs/protocol.md#latency); default: off")
      ->check(CLI::Range(0.0, 1e12));
  app.add_flag("--list", list, "print the workload table as JSON and exit");
  app.add_flag("--plant-harness-alloc", plant)->group("");  // audit positive control, hidden
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (list) {
    std::cout << workload_table().dump() << '\n';
    return 0;
  }
  if (workload.empty() || ops == 0) {
    std::cerr << "hs-workload: --workload and --ops are required (known workloads: "
              << known_workloads() << ")\n";
    return 2;
  }
  const wl::WorkloadSpec* spec = wl::find_workload(workload);
  if (spec == nullptr) {
    std::cerr << "hs-workload: unknown workload '" << workload << "'; known: " << known_workloads()
              << '\n';
    return 2;
  }

  const Identity id = probe_allocator(expect);
  if (!id.matches) {
    std::cerr << "hs-workload: refusing to run: not on the expected allocator " << expect << ": "
              << id.why << '\n';
    return 3;
  }

  const wl::MemoryHandshake handshake(memory_fd);
  const wl::RunResult r = wl::run_workload({.spec = spec,
                                            .threads = threads,
                                            .ops = ops,
                                            .seed = seed,
                                            .block = block,
                                            .verify = verify,
                                            .plant_harness_alloc = plant,
                                            .handshake = memory_fd >= 0 ? &handshake : nullptr,
                                            .latency_rate = latency_rate});
  if (!r.error.empty()) {
    std::cerr << "hs-workload: " << r.error << '\n';
    return r.handshake_failed ? 5 : 2;
  }
  if (r.handshake_failed) {
    std::cerr << "hs-workload: memory handshake: the parent did not answer \"exit\"\n";
    return 5;
  }

  const std::uint64_t done = r.calls.total();
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  Json seeds{{"campaign", seed}, {"block", block}, {"workers", Json::array()}};
  for (const auto s : r.worker_seeds) seeds["workers"].push_back(hex64(s));
  Json out{{"schema", "heapscope.workload-run.v1"},
           {"workload", spec->name},
           {"threads", threads},
           {"ops", done},
           {"ops_requested", ops},
           {"seconds", r.seconds},
           {"ops_per_sec", r.seconds > 0 ? static_cast<double>(done) / r.seconds : 0.0},
           {"peak_rss_bytes", peak_rss_bytes()},
           {"stream_bytes", r.stream_bytes},
           {"peak_live_bytes", r.peak_live_bytes},
           {"stream_digest", hex64(r.digest)},
           {"seeds", seeds},
           {"calls", calls_json(r.calls)},
           {"allocator", id.json},
           {"verify", Json{{"ran", r.verified},
                           {"errors", r.verify.total()},
                           {"content", r.verify.content},
                           {"misaligned", r.verify.misaligned},
                           {"calloc_not_zero", r.verify.calloc_not_zero},
                           {"leaked", r.verify.leaked},
                           {"handoff_mismatch", r.verify.handoff_mismatch}}},
           {"alloc_failures", r.alloc_failures},
           {"threads_created_in_region", r.threads_created_in_region},
           {"cpus_online", cpus},
           {"oversubscribed", cpus > 0 && threads > static_cast<unsigned long>(cpus)}};
  if (r.latency) out["latency"] = latency_json(*r.latency, *latency_rate);
  if (r.shim) {
    const hs_shim_counts& c = *r.shim;
    out["shim"] = calls_json({c.malloc, c.free, c.realloc, c.calloc, c.aligned});
  }
  // replace: an object path with non-UTF-8 bytes must not abort the report.
  std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
  return r.alloc_failures != 0 || r.verify.total() != 0 ? 4 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "hs-workload: internal error: " << e.what() << '\n';
    return 70;
  }
}
