#include "harness/suite/suite_campaign.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "base/sha256.h"
#include "harness/app/app_campaign.h"
#include "harness/app/app_probe.h"
#include "harness/app/app_spec.h"
#include "harness/app/program_file.h"
#include "harness/campaign/block_order.h"
#include "harness/campaign/campaign_setup.h"
#include "harness/campaign/raw_run_header.h"
#include "harness/process/interrupt_guard.h"
#include "harness/process/spawn.h"
#include "harness/process/steady_clock.h"

namespace heapscope::harness {
namespace {

namespace fs = std::filesystem;

void on_signal(int /*sig*/) { request_app_interrupt(); }

SuitePlaceholders places_of(const SuiteCampaign& c, const SuiteCaseState& s) {
  return {(fs::path(c.work_dir) / c.case_of(s).name).string(), c.spec.suite_dir, "", "",
          c.input_seed};
}

std::vector<std::string> plain_env_of(const SuiteCampaign& c, const SuiteCaseState& s) {
  AppSpec app;
  app.extra_env = expand_all(c.case_of(s).env, places_of(c, s));
  return app_base_environment(app);
}

double timeout_of(const SuiteCampaign& c, const SuiteCaseState& s) {
  const double t = c.case_of(s).timeout_seconds;
  return t > 0 ? t : c.spec.timeout_seconds;
}

std::string outcome_text(const SuiteCase& sc, const CaseRunResult& r) {
  if (!r.command.ok) return "FAILED " + r.command.kind + ": " + r.command.reason;
  char buf[160];
  if (sc.metric.kind == "throughput") {
    std::snprintf(buf, sizeof buf, "%.4g %s, %.4f s wall, %.1f MiB", r.metric,
                  sc.metric.unit.c_str(), r.command.wall_seconds,
                  static_cast<double>(case_rss_bytes(sc, r)) / 1048576.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.4f s wall, %.1f MiB", r.metric,
                  static_cast<double>(case_rss_bytes(sc, r)) / 1048576.0);
  }
  return buf;
}

// The program whose allocator matters: the first server under the allocator, else the command.
std::vector<std::string> probed_argv(const SuiteCase& sc, const SuitePlaceholders& p) {
  for (const SuiteStep& st : sc.setup) {
    if (st.allocator) return expand_all(st.command, p);
  }
  return expand_all(sc.command, p);
}

Json metric_json(const SuiteMetric& m) {
  return {{"kind", m.kind},
          {"unit", m.kind == "throughput" ? m.unit : std::string("s")},
          {"direction", m.higher_is_better ? "higher-is-better" : "lower-is-better"}};
}

Json case_json(const SuiteCampaign& c, const SuiteCaseState& s) {
  const SuiteCase& sc = c.case_of(s);
  return {{"name", sc.name},
          {"description", sc.description},
          {"status", s.status},
          {"reason", s.reason},
          {"baseline", s.baseline},
          {"baseline_reason", sc.baseline_reason},
          {"in_geomean", s.status == "ok" && s.baseline == c.baseline},
          {"metric", metric_json(sc.metric)},
          {"rss", sc.rss},
          {"active", s.active},
          {"env", s.plain_env},
          {"note", sc.note}};
}

void select_cases(SuiteCampaign& c, const SuiteOptions& o) {
  std::vector<std::string> names = o.cases;
  if (names.empty() && o.quick && !c.spec.quick_cases.empty()) names = c.spec.quick_cases;
  for (const std::string& n : names) {
    if (std::none_of(c.spec.cases.begin(), c.spec.cases.end(),
                     [&](const SuiteCase& sc) { return sc.name == n; })) {
      throw CampaignError("suite " + c.spec.name + " has no case '" + n + "'");
    }
  }
  for (std::size_t i = 0; i < c.spec.cases.size(); ++i) {
    if (names.empty() ||
        std::find(names.begin(), names.end(), c.spec.cases[i].name) != names.end()) {
      SuiteCaseState s;
      s.index = i;
      c.cases.push_back(s);
    }
  }
}

// Requires, inputs and the probe of one case: its status, baseline and active allocators.
void examine_case(SuiteCampaign& c, SuiteCaseState& s, Json& record, const std::string& shim) {
  const SuiteCase& sc = c.case_of(s);
  s.plain_env = plain_env_of(c, s);
  s.baseline = sc.baseline.empty() ? c.baseline : sc.baseline;
  for (const std::string& prog : sc.requires_programs) {
    if (resolve_command(prog, "", path_variable(s.plain_env)).empty()) {
      s.status = "unavailable";
      s.reason = prog + " is not installed (ci/install-deps.sh installs the suite's packages)";
      return;
    }
  }
  try {
    record["inputs"] = generate_inputs(c, s, nullptr);
  } catch (const CampaignError& e) {
    s.status = "failed";
    s.reason = std::string("inputs: ") + e.what();
    return;
  }
  SuitePlaceholders p = places_of(c, s);
  p.port = "0";  // only to name the program: each probe run picks its own port
  const std::vector<std::string> argv = probed_argv(sc, p);
  AppProbeRequest probe;
  probe.executable = resolve_command(argv[0], p.work, path_variable(s.plain_env));
  probe.argv = argv;
  probe.base_env = s.plain_env;
  probe.cwd = p.work;
  probe.timeout_seconds = timeout_of(c, s);
  probe.shim = shim;
  probe.run = [&](const std::vector<std::string>& env) {
    return run_case_once(case_request(c, s, env)).command;
  };
  std::cerr << "hsbench suite: " << sc.name << ": probing " << probe.executable << "\n";
  const AppProbeReport rep = probe_application(probe, c.allocators);
  std::cerr << describe_probe(rep);
  record["probe"] = app_probe_to_json(rep);
  if (rep.blocked) {
    s.status = "not-comparable";
    s.reason =
        rep.problems.empty() ? "the probe found the comparison meaningless" : rep.problems.front();
    return;
  }
  for (const AllocatorInfo& a : c.allocators) {
    const auto it =
        std::find_if(rep.allocators.begin(), rep.allocators.end(),
                     [&](const AllocatorProbe& ap) { return ap.allocator == a.spec.id; });
    if (a.available && it != rep.allocators.end() && it->serves) s.active.push_back(a.spec.id);
  }
  if (std::find(s.active.begin(), s.active.end(), s.baseline) == s.active.end()) {
    std::string why = "its baseline " + s.baseline + " is not measurable here";
    for (const AllocatorProbe& ap : rep.allocators) {
      if (ap.allocator == s.baseline && !ap.serves) why += ": " + ap.problem;
    }
    s.status = "not-comparable";
    s.reason = why;
  }
}

void warm_up(const SuiteCampaign& c, SuiteCaseState& s, Json& record) {
  record["warmups"] = Json::array();
  if (s.status != "ok") return;
  const SuiteCase& sc = c.case_of(s);
  std::size_t ok = 0;
  std::string first_failure;
  for (unsigned w = 0; w < c.warmup && !app_interrupt_requested(); ++w) {
    for (const std::string& id : s.active) {
      const CaseRunResult r = run_case_once(case_request(c, s, case_allocator_env(c, s, id)));
      std::fprintf(stderr, "warmup %s %u %-14s %s\n", sc.name.c_str(), w, id.c_str(),
                   outcome_text(sc, r).c_str());
      record["warmups"].push_back({{"allocator", id},
                                   {"status", r.command.ok ? "ok" : "failed"},
                                   {"kind", r.command.kind},
                                   {"reason", r.command.reason},
                                   {"wall_seconds", r.command.wall_seconds}});
      if (r.command.ok) {
        ++ok;
      } else if (first_failure.empty()) {
        first_failure = id + ": " + r.command.kind + ": " + r.command.reason;
      }
    }
  }
  if (c.warmup > 0 && ok == 0 && !app_interrupt_requested()) {
    s.status = "failed";
    s.reason = "every warmup run failed (" + first_failure + ")";
  }
}

}  // namespace

const AllocatorInfo* SuiteCampaign::allocator(const std::string& id) const {
  return find_allocator(allocators, id);
}

Json generate_inputs(const SuiteCampaign& c, const SuiteCaseState& s, const Json* expected) {
  const SuiteCase& sc = c.case_of(s);
  const SuitePlaceholders p = places_of(c, s);
  std::error_code ec;
  // Already there with the recorded digests (a resume or reproduction in the same place).
  if (expected != nullptr && expected->is_array() && expected->size() == sc.inputs.size()) {
    bool present = true;
    for (const Json& e : *expected) {
      std::string error;
      const std::string file = (fs::path(p.work) / e.value("file", "")).string();
      present &= base::sha256_file_hex(file, &error).value_or("") == e.value("sha256", "-");
    }
    if (present) return *expected;
  }
  fs::create_directories(p.work, ec);
  if (ec) throw CampaignError("cannot create " + p.work + ": " + ec.message());
  Json out = Json::array();
  for (const SuiteInput& in : sc.inputs) {
    const std::string file = (fs::path(p.work) / in.file).string();
    fs::create_directories(fs::path(file).parent_path(), ec);
    const std::vector<std::string> argv = expand_all(in.generator, p);
    const std::vector<std::string> env = plain_env_of(c, s);
    SpawnRequest sr;
    sr.program = resolve_command(argv[0], p.work, path_variable(env));
    if (sr.program.empty()) throw CampaignError("generator not found: " + argv[0]);
    sr.argv = argv;
    sr.env = &env;
    sr.cwd = p.work;
    sr.stdin_path = "/dev/null";
    const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw CampaignError("cannot write " + file);
    sr.stdout_fd = fd;
    std::string error;
    const pid_t pid = spawn_process(sr, &error);
    close(fd);
    if (pid < 0) throw CampaignError("generator of " + in.file + ": " + error);
    const int status = wait_for_exit(pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      throw CampaignError("the generator of " + in.file + " failed (status " +
                          std::to_string(status) + ")");
    }
    const std::string digest = base::sha256_file_hex(file, &error).value_or("");
    const auto bytes = static_cast<std::uint64_t>(fs::file_size(file, ec));
    out.push_back({{"file", in.file}, {"sha256", digest}, {"bytes", bytes}});
  }
  // Compared field by field: a raw run read back may order an entry's keys differently.
  const auto same = [](const Json& a, const Json& b) {
    if (!a.is_array() || a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      for (const char* key : {"file", "sha256", "bytes"}) {
        if (!a[i].contains(key) || a[i][key] != b[i][key]) return false;
      }
    }
    return true;
  };
  if (expected != nullptr && !same(*expected, out)) {
    throw CampaignError("the inputs of case " + sc.name +
                        " regenerated from the recorded seed differ from the recorded digests "
                        "(did the generator or a program it uses change?)");
  }
  return out;
}

std::vector<std::string> case_allocator_env(const SuiteCampaign& c, const SuiteCaseState& s,
                                            const std::string& id) {
  return app_child_environment(s.plain_env, child_environment(*c.allocator(id)));
}

CaseRunRequest case_request(const SuiteCampaign& c, const SuiteCaseState& s,
                            std::vector<std::string> allocator_env) {
  CaseRunRequest r;
  r.suite_case = &c.case_of(s);
  r.places = places_of(c, s);
  r.allocator_env = std::move(allocator_env);
  r.plain_env = s.plain_env;
  r.timeout_seconds = timeout_of(c, s);
  return r;
}

SuiteCampaign prepare_suite(const SuiteOptions& o, Json& raw) {
  const InterruptGuard guard(on_signal);
  SuiteCampaign c;
  c.spec = load_suite(o.suite);
  c.quick = o.quick;
  c.blocks = o.blocks > 0 ? o.blocks : (o.quick ? c.spec.quick_blocks : c.spec.blocks);
  c.warmup = o.warmup ? *o.warmup : c.spec.warmup;
  c.seed = o.seed ? *o.seed : fresh_seed();
  c.input_seed = o.input_seed ? *o.input_seed : c.spec.input_seed;
  c.baseline = o.baseline.empty() ? c.spec.baseline : o.baseline;
  if (o.work_dir.empty()) throw CampaignError("no work directory given");
  std::error_code ec;
  fs::create_directories(o.work_dir, ec);
  c.work_dir = fs::absolute(o.work_dir, ec).lexically_normal().string();
  select_cases(c, o);
  c.allocators = inspect_selected_allocators(o.allocators, o.user_allocators, "suite");
  const std::string shim = app_probe_shim_path();
  if (shim.empty())
    throw CampaignError("cannot find the probe shim (set HEAPSCOPE_APP_PROBE_SHIM)");

  Json cases = Json::array();
  for (SuiteCaseState& s : c.cases) {
    Json record = Json::object();
    // One case's trouble is recorded and the suite goes on.
    try {
      if (!app_interrupt_requested()) examine_case(c, s, record, shim);
      if (!app_interrupt_requested()) warm_up(c, s, record);
    } catch (const std::exception& e) {
      s.status = "failed";
      s.reason = e.what();
    }
    if (s.status != "ok") {
      std::cerr << "hsbench suite: case " << c.case_of(s).name << " " << s.status << ": "
                << s.reason << "\n";
    }
    Json j = case_json(c, s);
    for (const auto& [k, v] : record.items()) j[k] = v;
    cases.push_back(j);
  }
  for (const AllocatorInfo& a : c.allocators) {
    const bool used = std::any_of(c.cases.begin(), c.cases.end(), [&](const SuiteCaseState& s) {
      return std::find(s.active.begin(), s.active.end(), a.spec.id) != s.active.end();
    });
    if (used) c.active.push_back(a.spec.id);
  }

  CampaignSpec spec;
  spec.name = "suite:" + c.spec.name;
  for (const SuiteCaseState& s : c.cases) spec.workloads.push_back(c.case_of(s).name);
  spec.threads = {1};
  spec.allocators = o.allocators;
  spec.user_allocators = o.user_allocators;
  spec.blocks = c.blocks;
  spec.seed = c.seed;
  spec.baseline = c.baseline;
  spec.timeout_seconds = c.spec.timeout_seconds;
  spec.memory = false;
  raw = new_raw_run_header({.campaign = spec,
                            .seed = c.seed,
                            .baseline = c.baseline,
                            .active = c.active,
                            .workload_program = c.spec.file,
                            .allocators = c.allocators});
  raw["suite"] = {{"name", c.spec.name},        {"description", c.spec.description},
                  {"file", c.spec.file},        {"source", c.spec.source},
                  {"input_seed", c.input_seed}, {"quick", c.quick},
                  {"work_dir", c.work_dir},     {"blocks", c.blocks},
                  {"warmup", c.warmup},         {"cases", cases}};
  return c;
}

SuiteCampaign resume_suite(const Json& raw, const std::vector<std::string>& user_allocators,
                           const std::string& only_case) {
  const Json& suite = raw.at("suite");
  SuiteCampaign c;
  try {
    c.spec = suite_from_json(suite.at("source"), suite.at("file").get<std::string>());
  } catch (const CampaignError& e) {
    throw RawRunError(std::string("the recorded suite is not valid: ") + e.what());
  }
  c.seed = raw.at("seed").get<std::uint64_t>();
  c.input_seed = suite.at("input_seed").get<std::uint64_t>();
  c.blocks = suite.at("blocks").get<unsigned>();
  c.warmup = suite.at("warmup").get<unsigned>();
  c.quick = suite.at("quick").get<bool>();
  c.baseline = raw.at("baseline").get<std::string>();
  c.work_dir = suite.at("work_dir").get<std::string>();
  std::vector<std::string> ids;
  for (const Json& a : raw.at("allocators")) ids.push_back(a.at("id").get<std::string>());
  std::vector<std::string> user = user_allocators;
  for (const Json& u : raw.at("campaign").value("user_allocators", Json::array())) {
    if (std::find(user.begin(), user.end(), u.get<std::string>()) == user.end()) {
      user.push_back(u.get<std::string>());
    }
  }
  c.allocators = inspect_selected_allocators(ids, user, "suite");
  c.active = raw.at("active_allocators").get<std::vector<std::string>>();
  for (const Json& rec : suite.at("cases")) {
    SuiteCaseState s;
    const auto name = rec.at("name").get<std::string>();
    const auto it = std::find_if(c.spec.cases.begin(), c.spec.cases.end(),
                                 [&](const SuiteCase& sc) { return sc.name == name; });
    if (it == c.spec.cases.end()) throw RawRunError("the recorded suite has no case " + name);
    s.index = static_cast<std::size_t>(it - c.spec.cases.begin());
    s.status = rec.at("status").get<std::string>();
    s.reason = rec.value("reason", "");
    s.baseline = rec.at("baseline").get<std::string>();
    s.active = rec.at("active").get<std::vector<std::string>>();
    s.plain_env = rec.at("env").get<std::vector<std::string>>();
    for (const std::string& id : s.active) {
      const AllocatorInfo* a = c.allocator(id);
      if (a == nullptr || !a->available) {
        throw RawRunError("allocator " + id + " of case " + name + " is not available now" +
                          (a == nullptr ? "" : ": " + a->reason));
      }
    }
    if (s.status == "ok" && rec.contains("inputs") && (only_case.empty() || only_case == name)) {
      try {
        generate_inputs(c, s, &rec["inputs"]);
      } catch (const CampaignError& e) {
        throw RawRunError(e.what());
      }
    }
    c.cases.push_back(s);
  }
  return c;
}

ExecuteResult run_suite(const SuiteCampaign& c, Json& raw, RawRunWriter& writer) {
  const InterruptGuard guard(on_signal);
  ExecuteResult result;
  if (raw["orders"].empty()) {
    for (const SuiteCaseState& s : c.cases) {
      if (s.status != "ok") continue;
      const std::string& name = c.case_of(s).name;
      const auto orders =
          balanced_block_orders(s.active.size(), c.blocks, block_order_seed(c.seed, name, 1));
      for (unsigned b = 0; b < c.blocks; ++b) {
        Json ids = Json::array();
        for (std::size_t i : orders[b]) ids.push_back(s.active[i]);
        raw["orders"].push_back({{"workload", name}, {"threads", 1}, {"block", b}, {"order", ids}});
      }
    }
  }
  std::size_t total = 0;
  std::size_t done = 0;
  for (const Json& o : raw["orders"]) total += o["order"].size();
  for (const Json& s : raw["samples"]) done += s.contains("id") ? 1 : 0;
  const std::string host = raw["hosts"].back().value("hostname", "");
  const double start = steady_seconds();
  std::size_t ran_now = 0;
  // Block-major: every case's block b before any case's block b + 1.
  for (unsigned b = 0; b < c.blocks && !app_interrupt_requested(); ++b) {
    for (const SuiteCaseState& s : c.cases) {
      if (s.status != "ok") continue;
      const SuiteCase& sc = c.case_of(s);
      const Json* order = nullptr;
      for (const Json& o : raw["orders"]) {
        if (o["workload"] == sc.name && o["block"] == b) order = &o;
      }
      if (order == nullptr) continue;
      std::size_t position = 0;
      for (const Json& id_json : (*order)["order"]) {
        if (app_interrupt_requested()) break;
        const auto id = id_json.get<std::string>();
        const std::string sid = sample_id(sc.name, 1, b, id);
        ++position;
        if (find_sample(raw, sid) != nullptr) continue;  // resumed: already measured
        const std::vector<std::string> env = case_allocator_env(c, s, id);
        const CaseRunResult r = run_case_once(case_request(c, s, env));
        if (r.command.kind == "interrupted") break;  // discarded: it did not run to its end
        Json m = app_measurement_json(r.command);
        m["metric"] = r.command.ok ? Json(r.metric) : Json();
        m["server_peak_rss_bytes"] = r.server_peak_rss_bytes;
        m["rss_bytes"] = case_rss_bytes(sc, r);
        m["port"] = r.port;
        Json sample{{"id", sid},
                    {"workload", sc.name},
                    {"threads", 1},
                    {"block", b},
                    {"position", position - 1},
                    {"allocator", id},
                    {"argv", r.argv},
                    {"env", env},
                    {"seeds", {{"campaign", c.seed}, {"block", b}, {"input", c.input_seed}}},
                    {"host", host},
                    {"wall_seconds", r.command.wall_seconds},
                    {"status", r.command.ok ? "ok" : "failed"}};
        if (!r.command.ok) sample["failure"] = app_failure_json(r.command);
        sample["measurement"] = m;
        raw["samples"].push_back(sample);
        ++result.ran;
        ++ran_now;
        if (!r.command.ok) ++result.failed;
        const double eta = (steady_seconds() - start) / static_cast<double>(ran_now) *
                           static_cast<double>(total - done - ran_now);
        std::fprintf(stderr, "[%zu/%zu] b%u %-10s %-14s %s | ETA %.0f s\n", done + ran_now, total,
                     b, sc.name.c_str(), id.c_str(), outcome_text(sc, r).c_str(), eta);
        writer.maybe_save(raw);
      }
    }
  }
  result.interrupted = app_interrupt_requested();
  raw["complete"] = !result.interrupted && raw["samples"].size() == total;
  writer.save(raw);
  return result;
}

}  // namespace heapscope::harness
