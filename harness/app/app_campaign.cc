#include "harness/app/app_campaign.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

#include "harness/app/app_sample_runner.h"
#include "harness/app/program_file.h"
#include "harness/campaign/block_order.h"
#include "harness/campaign/campaign_setup.h"
#include "harness/campaign/raw_run_header.h"
#include "harness/process/interrupt_guard.h"
#include "harness/process/steady_clock.h"
#include "harness/registry/engine_libraries.h"

namespace heapscope::harness {
namespace {

void on_signal(int /*sig*/) { request_app_interrupt(); }

AppRunRequest request_for(const AppCampaign& c, const AllocatorInfo& info) {
  return {
      c.executable, c.spec.command,    app_child_environment(c.base_env, child_environment(info)),
      c.spec.cwd,   c.spec.stdin_path, c.spec.timeout_seconds};
}

std::string outcome_text(const AppRunResult& r) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.4f s wall, %.1f MiB", r.wall_seconds,
                static_cast<double>(r.peak_rss_tree_bytes) / 1048576.0);
  return r.ok ? std::string(buf) : "FAILED " + r.kind + ": " + r.reason;
}

}  // namespace

const AllocatorInfo* AppCampaign::allocator(const std::string& id) const {
  return find_allocator(allocators, id);
}

std::vector<AllocatorInfo> inspect_selected_allocators(const std::vector<std::string>& ids,
                                                       const std::vector<std::string>& user,
                                                       const std::string& command) {
  std::vector<AllocatorSpec> specs = registry_specs({engine_libraries(), user});
  if (!ids.empty()) {
    std::vector<std::string> added;
    const std::vector<std::string> chosen = with_user_allocators(ids, specs, &added);
    for (const std::string& id : added) {
      std::cerr << "hsbench " << command << ": allocator " << id
                << " given with --allocator but not in --allocators: added\n";
    }
    specs = select_allocators(specs, chosen);
  } else {
    specs = default_allocators(std::move(specs));
  }
  std::vector<AllocatorInfo> out;
  for (const AllocatorSpec& s : specs) {
    out.push_back(inspect_allocator(s, self_probe()));
    if (!out.back().available) {
      std::cerr << "hsbench " << command << ": allocator " << s.id
                << " unavailable, skipped: " << out.back().reason << "\n";
    }
  }
  return out;
}

AppCampaign prepare_app_campaign(AppSpec spec) {
  const InterruptGuard guard(on_signal);
  validate_app_spec(spec);
  AppCampaign c;
  c.seed = spec.seed ? *spec.seed : fresh_seed();
  c.workload = app_workload_id(spec);
  c.base_env = app_base_environment(spec);
  c.executable = resolve_command(spec.command[0], spec.cwd, path_variable(c.base_env));
  if (c.executable.empty()) {
    throw CampaignError("command not found: " + spec.command[0] +
                        " (PATH=" + path_variable(c.base_env) + ")");
  }

  c.allocators = inspect_selected_allocators(spec.allocators, spec.user_allocators, "app");

  const std::string shim = app_probe_shim_path();
  if (shim.empty())
    throw CampaignError("cannot find the probe shim (set HEAPSCOPE_APP_PROBE_SHIM)");
  std::cerr << "hsbench app: probing " << c.executable << " under each allocator\n";
  c.probe = probe_application({c.executable, spec.command, c.base_env, spec.cwd, spec.stdin_path,
                               spec.timeout_seconds, shim},
                              c.allocators);
  std::cerr << describe_probe(c.probe);
  for (const AllocatorProbe& p : c.probe.allocators) {
    if (p.serves) continue;
    for (AllocatorInfo& a : c.allocators) {
      if (a.spec.id == p.allocator && !c.probe.blocked) {
        a.available = false;
        a.reason = "probe: " + p.problem;
      }
    }
  }
  for (const AllocatorInfo& a : c.allocators) {
    if (a.available) c.active.push_back(a.spec.id);
  }
  if (c.active.empty() && !c.probe.blocked) {
    throw CampaignError("no allocator of the selection is available");
  }
  c.baseline = choose_baseline(spec.baseline, c.active, {"glibc"}, "here");
  c.spec = std::move(spec);
  return c;
}

Json new_app_raw_run(const AppCampaign& c) {
  Json raw = new_raw_run_header({.campaign = app_campaign_spec(c.spec, c.seed, c.baseline),
                                 .seed = c.seed,
                                 .baseline = c.baseline,
                                 .active = c.active,
                                 .workload_program = c.executable,
                                 .allocators = c.allocators});
  raw["application"] =
      application_json(c.spec, c.executable, c.base_env, app_probe_to_json(c.probe));
  return raw;
}

AppExecResult run_app_campaign(const AppCampaign& c, Json& raw, RawRunWriter& writer) {
  // SIGINT/SIGTERM stop the sample in flight (its process group is killed).
  const InterruptGuard guard(on_signal);
  AppExecResult result;
  Json& app = raw["application"];

  app["warmups"] = Json::array();
  for (unsigned w = 0; w < c.spec.warmup && !app_interrupt_requested(); ++w) {
    for (const std::string& id : c.active) {
      const AppRunResult r = run_app_command(request_for(c, *c.allocator(id)));
      std::fprintf(stderr, "warmup %u %-14s %s\n", w, id.c_str(), outcome_text(r).c_str());
      app["warmups"].push_back({{"allocator", id},
                                {"status", r.ok ? "ok" : "failed"},
                                {"kind", r.kind},
                                {"wall_seconds", r.wall_seconds}});
    }
  }

  const auto orders = balanced_block_orders(c.active.size(), c.spec.blocks,
                                            block_order_seed(c.seed, c.workload, 1));
  for (unsigned b = 0; b < c.spec.blocks; ++b) {
    Json ids = Json::array();
    for (std::size_t i : orders[b]) ids.push_back(c.active[i]);
    raw["orders"].push_back(
        {{"workload", c.workload}, {"threads", 1}, {"block", b}, {"order", ids}});
  }

  const std::size_t total = c.spec.blocks * c.active.size();
  const std::string host = raw["hosts"].back().value("hostname", "");
  const double start = steady_seconds();
  for (const Json& o : raw["orders"]) {
    const auto b = o["block"].get<std::uint64_t>();
    std::size_t position = 0;
    for (const Json& id_json : o["order"]) {
      if (app_interrupt_requested()) break;
      const auto id = id_json.get<std::string>();
      const AppRunRequest req = request_for(c, *c.allocator(id));
      const AppRunResult r = run_app_command(req);
      if (r.kind == "interrupted") break;  // discarded: it did not run to its end
      Json sample{{"id", sample_id(c.workload, 1, b, id)},
                  {"workload", c.workload},
                  {"threads", 1},
                  {"block", b},
                  {"position", position++},
                  {"allocator", id},
                  {"argv", req.argv},
                  {"env", req.env},
                  {"seeds", {{"campaign", c.seed}, {"block", b}}},
                  {"host", host},
                  {"wall_seconds", r.wall_seconds},
                  {"status", r.ok ? "ok" : "failed"}};
      if (!r.ok) sample["failure"] = app_failure_json(r);
      sample["measurement"] = app_measurement_json(r);
      raw["samples"].push_back(sample);
      ++result.ran;
      if (!r.ok) ++result.failed;
      const double eta = (steady_seconds() - start) / static_cast<double>(result.ran) *
                         static_cast<double>(total - result.ran);
      std::fprintf(stderr, "[%zu/%zu] block %llu %-14s %s | ETA %.0f s\n", result.ran, total,
                   static_cast<unsigned long long>(b), id.c_str(), outcome_text(r).c_str(), eta);
      writer.maybe_save(raw);
    }
  }
  result.interrupted = app_interrupt_requested();
  if (c.spec.same_output) check_same_output(raw, c.baseline);
  raw["complete"] = !result.interrupted && raw["samples"].size() == total;
  writer.save(raw);
  return result;
}

void check_same_output(Json& raw, const std::string& baseline) {
  // Reference: the most common digest of the baseline's successful samples (of all successful
  // samples when the baseline has none).
  std::map<std::string, std::size_t> base_counts;
  std::map<std::string, std::size_t> all_counts;
  for (const Json& s : raw["samples"]) {
    if (s["status"] != "ok") continue;
    const auto digest = s["measurement"].value("stdout_sha256", std::string());
    ++all_counts[digest];
    if (s["allocator"] == baseline) ++base_counts[digest];
  }
  const auto& counts = base_counts.empty() ? all_counts : base_counts;
  std::string reference;
  std::size_t best = 0;
  for (const auto& [digest, n] : counts) {
    if (n > best) reference = digest, best = n;
  }
  std::size_t differing = 0;
  for (Json& s : raw["samples"]) {
    if (s["status"] != "ok") continue;
    const auto digest = s["measurement"].value("stdout_sha256", std::string());
    if (digest == reference) continue;
    ++differing;
    s["status"] = "failed";
    s["failure"] = {{"kind", "output-differs"},
                    {"reason", "stdout (sha256 " + digest.substr(0, 12) + "...) differs from " +
                                   baseline + "'s (sha256 " + reference.substr(0, 12) + "...)"},
                    {"exit_code", s["measurement"]["exit_status"]},
                    {"signal", 0},
                    {"stderr", ""}};
  }
  Json check{{"reference_sha256", reference},
             {"reference_from", base_counts.empty() ? "all samples" : baseline},
             {"differing_samples", differing},
             {"baseline_deterministic", base_counts.size() <= 1}};
  raw["application"]["output_check"] = check;
  if (base_counts.size() > 1) {
    raw["application"]["probe"]["notes"].push_back(
        "stdout differed between runs of the baseline " + baseline +
        " itself: the program's output is not deterministic, so --same-output flags noise.");
  }
}

}  // namespace heapscope::harness
