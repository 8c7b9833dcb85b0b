#include "harness/campaign/campaign_exec.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <unordered_set>

#include "harness/campaign/block_order.h"
#include "harness/campaign/calibration.h"
#include "harness/campaign/sample_runner.h"
#include "harness/process/interrupt_guard.h"
#include "harness/process/steady_clock.h"

namespace heapscope::harness {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

void on_signal(int /*sig*/) { g_interrupted = 1; }

// SIGINT/SIGTERM handled for the scope's lifetime: the flag is cleared, the handler installed,
// and the child in flight is told to watch it (sample_runner.h kills it at once).
class StopScope {
 public:
  StopScope() : guard_(on_signal) {
    g_interrupted = 0;
    watch_stop_flag(&g_interrupted);
  }
  ~StopScope() { watch_stop_flag(nullptr); }
  StopScope(const StopScope&) = delete;
  StopScope& operator=(const StopScope&) = delete;

 private:
  InterruptGuard guard_;
};

std::string format_duration(double seconds) {
  const long s = seconds > 0 ? std::lround(seconds) : 0;
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  }
  return buf;
}

Json failed_sample(Json sample, const std::string& kind, const std::string& reason) {
  sample["status"] = "failed";
  sample["failure"] = {{"kind", kind}, {"reason", reason}};
  return sample;
}

}  // namespace

void RawRunWriter::maybe_save(const Json& raw) {
  if (steady_seconds() - last_end_ >= 10 * last_cost_) save(raw);
}

void RawRunWriter::save(const Json& raw) {
  if (path_.empty()) return;
  const double start = steady_seconds();
  write_json_atomic(path_, raw);
  last_end_ = steady_seconds();
  last_cost_ = last_end_ - start;
}

bool ensure_calibration(const ResolvedCampaign& c, Json& raw, RawRunWriter& writer) {
  const StopScope stop;
  for (const std::string& w : c.spec.workloads) {
    for (unsigned t : c.spec.threads) {
      if (find_calibration(raw, w, t) != nullptr) continue;
      Json record = calibrate_cell(c, w, t);
      if (g_interrupted) {  // a calibration cut short is not one: the next run redoes it
        writer.save(raw);
        return false;
      }
      raw["calibration"].push_back(std::move(record));
      writer.maybe_save(raw);
    }
  }
  return true;
}

void ensure_orders(const ResolvedCampaign& c, Json& raw) {
  if (!raw["orders"].empty()) return;
  std::vector<std::vector<std::vector<std::size_t>>> per_cell;
  for (const std::string& w : c.spec.workloads) {
    for (unsigned t : c.spec.threads) {
      per_cell.push_back(
          balanced_block_orders(c.active.size(), c.spec.blocks, block_order_seed(c.seed, w, t)));
    }
  }
  for (unsigned b = 0; b < c.spec.blocks; ++b) {
    std::size_t cell = 0;
    for (const std::string& w : c.spec.workloads) {
      for (unsigned t : c.spec.threads) {
        Json ids = Json::array();
        for (std::size_t i : per_cell[cell][b]) ids.push_back(c.active[i]);
        raw["orders"].push_back({{"workload", w}, {"threads", t}, {"block", b}, {"order", ids}});
        ++cell;
      }
    }
  }
}

ExecuteResult execute_samples(const ResolvedCampaign& c, Json& raw, RawRunWriter& writer) {
  const StopScope stop;
  ExecuteResult result;
  std::unordered_set<std::string> done;
  for (const Json& s : raw["samples"]) done.insert(s["id"].get<std::string>());
  std::size_t total = 0;
  for (const Json& o : raw["orders"]) total += o["order"].size();
  const std::size_t todo = total - std::min(total, done.size());
  const std::string host = raw["hosts"].back().value("hostname", "");
  const double start = steady_seconds();

  for (const Json& o : raw["orders"]) {
    const auto w = o["workload"].get<std::string>();
    const auto t = o["threads"].get<unsigned>();
    const auto b = o["block"].get<std::uint64_t>();
    const Json* cal = find_calibration(raw, w, t);
    std::size_t position = 0;
    for (const Json& id_json : o["order"]) {
      const auto alloc_id = id_json.get<std::string>();
      const std::string id = sample_id(w, t, b, alloc_id);
      const std::size_t pos = position++;
      if (done.contains(id)) continue;
      if (g_interrupted) break;

      Json sample{{"id", id},
                  {"workload", w},
                  {"threads", t},
                  {"block", b},
                  {"position", pos},
                  {"allocator", alloc_id},
                  {"argv", Json::array()},
                  {"env", Json::array()},
                  {"seeds", {{"campaign", c.seed}, {"block", b}}},
                  {"host", host}};
      const AllocatorInfo* info = c.allocator(alloc_id);
      const bool calibrated = cal != nullptr && cal->contains("ops") &&
                              (*cal)["status"] != "failed" &&
                              (!c.spec.latency || cal->contains("latency_rate_ops_per_sec"));
      if (info == nullptr || !info->available) {
        sample = failed_sample(sample, "allocator-unavailable",
                               info == nullptr ? "not in this host's registry" : info->reason);
      } else if (!calibrated) {
        sample = failed_sample(sample, "calibration-failed",
                               cal == nullptr            ? "no calibration"
                               : cal->contains("reason") ? (*cal)["reason"].get<std::string>()
                               : c.spec.latency
                                   ? "no latency rate: the baseline's capacity was not measured"
                                   : "");
      } else {
        SampleRequest req{
            c.program,    w, t, (*cal)["ops"].get<std::uint64_t>(), c.seed, b, c.spec.verify,
            c.spec.memory};
        if (c.spec.latency)
          req.latency_rate = (*cal)["latency_rate_ops_per_sec"].get<std::uint64_t>();
        const auto argv = sample_argv(req, *info);
        const auto env = sample_env(*info);
        sample["argv"] = argv;
        sample["env"] = env;
        const SampleOutcome out =
            run_sample(argv, env, c.spec.timeout_seconds, c.spec.return_points_seconds);
        if (g_interrupted) break;  // the child was killed mid-sample: discard it
        sample["wall_seconds"] = out.wall_seconds;
        if (!out.memory.is_null()) sample["memory"] = out.memory;
        sample["status"] = out.ok ? "ok" : "failed";
        if (!out.ok) sample["failure"] = failure_to_json(out);
        if (!out.measurement.is_null()) sample["measurement"] = out.measurement;
      }
      const bool ok = sample["status"] == "ok";
      raw["samples"].push_back(sample);
      done.insert(id);
      ++result.ran;
      if (!ok) ++result.failed;

      const double elapsed = steady_seconds() - start;
      const double eta = elapsed / static_cast<double>(result.ran) *
                         static_cast<double>(todo - std::min(todo, result.ran));
      const std::string what =
          ok ? std::to_string(sample["measurement"]["ops_per_sec"].get<double>() / 1e6)
                       .substr(0, 6) +
                   " Mops/s"
             : "FAILED " + sample["failure"]["kind"].get<std::string>() + ": " +
                   sample["failure"]["reason"].get<std::string>();
      std::fprintf(stderr, "[%zu/%zu] %s t=%u block %llu #%zu %-14s %s | ETA %s\n", done.size(),
                   total, w.c_str(), t, static_cast<unsigned long long>(b), pos, alloc_id.c_str(),
                   what.c_str(), format_duration(eta).c_str());
      writer.maybe_save(raw);
    }
    if (g_interrupted) break;
  }
  result.interrupted = g_interrupted != 0;
  raw["complete"] = done.size() >= total;
  writer.save(raw);
  return result;
}

}  // namespace heapscope::harness
