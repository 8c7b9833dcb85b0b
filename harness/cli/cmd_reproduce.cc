// `hsbench reproduce RAW.json SAMPLE_ID`: re-runs that sample's exact argv and environment and
// shows the recorded and the new measurement side by side. Exit 1 when the new run fails or
// its stream digest differs from the recorded one (the stream is a function of the seeds
// only, so a difference means the child or its inputs changed).
// An application sample (`hsbench app`) is re-run with its recorded executable, argv,
// environment, cwd and stdin; exit 1 when the new run fails, its exit status differs, or
// (runs made with --same-output) its stdout digest differs from the recorded one.
// A suite sample (`hsbench suite`) re-runs its case (setup, command, teardown, output check)
// under the recorded allocator environment; exit 1 when the new run or its check fails.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "harness/app/app_sample_runner.h"
#include "harness/campaign/raw_run.h"
#include "harness/campaign/sample_runner.h"
#include "harness/cli/commands.h"
#include "harness/process/interrupt_guard.h"
#include "harness/report/app_report.h"
#include "harness/report/suite_report.h"
#include "harness/suite/suite_campaign.h"

namespace heapscope::harness {
namespace {

struct ReproduceOptions {
  std::string raw;
  std::string id;
  double timeout = 0;
};

std::string field(const Json& m, const char* key) {
  if (!m.is_object() || !m.contains(key)) return "-";
  const Json& v = m[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v.get<double>());
    return buf;
  }
  return v.dump();
}

int reproduce_app_sample(const Json& raw, const Json& s, double timeout) {
  const Json& app = raw["application"];
  AppRunRequest req;
  req.executable = app.value("executable", "");
  req.argv = s["argv"].get<std::vector<std::string>>();
  req.env = s["env"].get<std::vector<std::string>>();
  req.cwd = app.value("cwd", "");
  req.stdin_path = app.value("stdin", "");
  req.timeout_seconds = timeout > 0 ? timeout : raw["campaign"].value("timeout_seconds", 300.0);
  std::cerr << "hsbench reproduce: cd '" << req.cwd << "' && env -i";
  for (const auto& e : req.env) std::cerr << " '" << e << "'";
  std::cerr << " '" << req.executable << "'";
  for (std::size_t i = 1; i < req.argv.size(); ++i) std::cerr << " '" << req.argv[i] << "'";
  std::cerr << " < " << (req.stdin_path.empty() ? "/dev/null" : req.stdin_path) << "\n";
  const AppRunResult now = run_app_command(req);

  const Json empty = Json::object();
  const Json& before = s.contains("measurement") ? s["measurement"] : empty;
  const Json after = app_measurement_json(now);
  std::printf("%-20s %-22s %-22s\n", "", "recorded", "now");
  std::printf("%-20s %-22s %-22s\n", "status",
              (s["status"].get<std::string>() +
               (s.contains("failure") ? ": " + s["failure"].value("kind", "") : ""))
                  .c_str(),
              now.ok ? "ok" : ("failed: " + now.kind).c_str());
  for (const char* key : {"wall_seconds", "user_seconds", "system_seconds", "peak_rss_tree_bytes",
                          "peak_rss_bytes", "exit_status", "stdout_sha256"}) {
    std::printf("%-20s %-22s %-22s\n", key, field(before, key).substr(0, 22).c_str(),
                field(after, key).substr(0, 22).c_str());
  }
  int rc = kExitOk;
  if (!now.ok) {
    std::cerr << "hsbench reproduce: the new run failed: " << now.kind << ": " << now.reason
              << "\n";
    rc = kExitFailure;
  }
  if (field(before, "exit_status") != field(after, "exit_status")) {
    std::cerr << "hsbench reproduce: exit status differs from the recorded one\n";
    rc = kExitFailure;
  }
  const bool same_digest = field(before, "stdout_sha256") == field(after, "stdout_sha256");
  if (same_digest) {
    std::printf("stdout digest matches\n");
  } else if (app.value("same_output", false)) {
    std::cerr << "hsbench reproduce: stdout digest differs from the recorded one\n";
    rc = kExitFailure;
  } else {
    std::printf("stdout digest differs (not checked: the run was made without --same-output)\n");
  }
  return rc;
}

// A suite sample: the case run again (its inputs regenerated from the recorded seed when the
// work directory lacks them, and checked against the recorded digests), servers and all, with
// the sample's recorded allocator environment.
int reproduce_suite_sample(const Json& raw, const Json& s, double timeout) {
  const auto name = s["workload"].get<std::string>();
  const SuiteCampaign c = resume_suite(raw, {}, name);
  const SuiteCaseState* state = nullptr;
  for (const SuiteCaseState& cs : c.cases) {
    if (c.case_of(cs).name == name) state = &cs;
  }
  if (state == nullptr) throw Failure("the raw run has no case " + name);
  CaseRunRequest req = case_request(c, *state, s["env"].get<std::vector<std::string>>());
  if (timeout > 0) req.timeout_seconds = timeout;
  std::cerr << "hsbench reproduce: case " << name << " in " << req.places.work << " under "
            << s["allocator"].get<std::string>() << "\n";
  const CaseRunResult now = run_case_once(req);
  const Json empty = Json::object();
  const Json& before = s.contains("measurement") ? s["measurement"] : empty;
  Json after = app_measurement_json(now.command);
  after["metric"] = now.command.ok ? Json(now.metric) : Json();
  after["server_peak_rss_bytes"] = now.server_peak_rss_bytes;
  after["rss_bytes"] = case_rss_bytes(c.case_of(*state), now);
  std::printf("%-22s %-22s %-22s\n", "", "recorded", "now");
  std::printf("%-22s %-22s %-22s\n", "status",
              (s["status"].get<std::string>() +
               (s.contains("failure") ? ": " + s["failure"].value("kind", "") : ""))
                  .c_str(),
              now.command.ok ? "ok" : ("failed: " + now.command.kind).c_str());
  for (const char* key : {"metric", "wall_seconds", "user_seconds", "system_seconds", "rss_bytes",
                          "server_peak_rss_bytes", "exit_status", "stdout_sha256"}) {
    std::printf("%-22s %-22s %-22s\n", key, field(before, key).substr(0, 22).c_str(),
                field(after, key).substr(0, 22).c_str());
  }
  if (!now.command.ok) {
    std::cerr << "hsbench reproduce: the new run failed: " << now.command.kind << ": "
              << now.command.reason << "\n";
    return kExitFailure;
  }
  std::printf("output check passes (%s)\n", c.case_of(*state).check.kind.c_str());
  return kExitOk;
}

int run_reproduce(const ReproduceOptions& o) {
  const Json raw = load_raw_run(o.raw);
  const Json* s = find_sample(raw, o.id);
  if (s == nullptr) {
    throw UsageError("no sample '" + o.id + "' in " + o.raw +
                     " (ids look like <workload>/t<threads>/b<block>/<allocator>)");
  }
  if (is_app_run(raw)) return reproduce_app_sample(raw, *s, o.timeout);
  if (is_suite_run(raw)) {
    try {
      return reproduce_suite_sample(raw, *s, o.timeout);
    } catch (const RawRunError& e) {
      throw Failure(std::string("cannot reproduce: ") + e.what());
    }
  }
  const auto argv = (*s)["argv"].get<std::vector<std::string>>();
  const auto env = (*s)["env"].get<std::vector<std::string>>();
  if (argv.empty()) {
    throw Failure("sample '" + o.id + "' never ran (" + (*s)["failure"].value("reason", "") + ")");
  }
  double timeout = o.timeout;
  if (timeout <= 0) timeout = raw["campaign"].value("timeout_seconds", 60.0);
  std::cerr << "hsbench reproduce: env -i";
  for (const auto& e : env) std::cerr << " '" << e << "'";
  for (const auto& a : argv) std::cerr << " '" << a << "'";
  std::cerr << "\n";
  // The recorded return points (memory protocol), so the new run reads the same ones.
  std::vector<double> return_points;
  if (s->contains("memory")) {
    for (const Json& p : (*s)["memory"]["return_points"])
      return_points.push_back(p["after_seconds"].get<double>());
  }
  // Ctrl-C/SIGTERM kill the child (it runs in a process group of its own) and stop.
  static volatile std::sig_atomic_t interrupted = 0;
  const InterruptGuard guard([](int) { interrupted = 1; });
  watch_stop_flag(&interrupted);
  const SampleOutcome now = run_sample(argv, env, timeout, return_points);
  watch_stop_flag(nullptr);
  if (interrupted) throw Interrupted("interrupted; the child was stopped");

  const Json empty = Json::object();
  const Json& before = s->contains("measurement") ? (*s)["measurement"] : empty;
  const Json& after = now.measurement.is_object() ? now.measurement : empty;
  std::printf("%-16s %-22s %-22s\n", "", "recorded", "now");
  std::printf("%-16s %-22s %-22s\n", "status", (*s)["status"].get<std::string>().c_str(),
              now.ok ? "ok" : ("failed: " + now.kind).c_str());
  for (const char* key : {"ops", "seconds", "ops_per_sec", "peak_rss_bytes", "stream_digest"}) {
    std::printf("%-16s %-22s %-22s\n", key, field(before, key).c_str(), field(after, key).c_str());
  }
  const Json& mem_before = s->contains("memory") ? (*s)["memory"] : empty;
  const Json& mem_after = now.memory.is_object() ? now.memory : empty;
  // The memory protocol's readings (RssAnon bytes), when either run has them.
  const std::pair<const char*, const char*> memory_rows[] = {
      {"anon baseline", "baseline_anon_bytes"},
      {"anon peak", "peak_anon_bytes"},
      {"anon drained", "drained_anon_bytes"}};
  for (const auto& [label, key] : memory_rows) {
    if (mem_before.contains(key) || mem_after.contains(key))
      std::printf("%-16s %-22s %-22s\n", label, field(mem_before, key).c_str(),
                  field(mem_after, key).c_str());
  }
  // The latency protocol's quantiles (ns), when either run has them (the argv carries the rate).
  const Json& lat_before = before.contains("latency") ? before["latency"] : empty;
  const Json& lat_after = after.contains("latency") ? after["latency"] : empty;
  const std::pair<const char*, const char*> latency_rows[] = {
      {"latency p50 ns", "p50_ns"}, {"latency p99 ns", "p99_ns"}, {"latency p99.9 ns", "p999_ns"}};
  for (const auto& [label, key] : latency_rows) {
    if (lat_before.contains(key) || lat_after.contains(key))
      std::printf("%-16s %-22s %-22s\n", label, field(lat_before, key).c_str(),
                  field(lat_after, key).c_str());
  }
  const std::string alloc_before =
      before.contains("allocator") ? field(before["allocator"], "malloc_object") : "-";
  const std::string alloc_after =
      after.contains("allocator") ? field(after["allocator"], "malloc_object") : "-";
  std::printf("%-16s %s\n%-16s %s\n", "malloc (rec.)", alloc_before.c_str(), "malloc (now)",
              alloc_after.c_str());
  if (!now.ok) {
    std::cerr << "hsbench reproduce: the new run failed: " << now.kind << ": " << now.reason
              << "\n";
    return kExitFailure;
  }
  if (field(before, "stream_digest") != field(after, "stream_digest")) {
    std::cerr << "hsbench reproduce: stream digest differs from the recorded one\n";
    return kExitFailure;
  }
  std::printf("stream digest matches\n");
  return kExitOk;
}

}  // namespace

void add_reproduce_command(CLI::App& app, CommandAction& run) {
  auto o = std::make_shared<ReproduceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "reproduce", "Re-run one recorded sample (same argv and environment) and compare");
  cmd->add_option("raw", o->raw, "Raw-run JSON holding the sample")->required();
  cmd->add_option(
         "sample", o->id,
         "Sample id: <workload>/t<threads>/b<block>/<allocator>, e.g. tiny-hot/t1/b0/glibc")
      ->required();
  cmd->add_option("--timeout", o->timeout, "Watchdog, in seconds (default: the campaign's)");
  cmd->footer(help_footer(
      {"hsbench reproduce hsbench-quick.raw.json tiny-hot/t1/b0/glibc"},
      "  0  the new run matches, 1  the new run failed or its stream digest (app runs: exit\n"
      "  status, stdout digest with --same-output) differs, 2  usage error or unknown sample"));
  cmd->final_callback([o, &run] { run = [o] { return run_reproduce(*o); }; });
}

}  // namespace heapscope::harness
