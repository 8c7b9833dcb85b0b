#include "harness/campaign/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "harness/campaign/sample_runner.h"

namespace heapscope::harness {
namespace {

constexpr std::uint64_t kMinOps = 1000;
constexpr std::uint64_t kMaxOps = std::uint64_t{1} << 36;  // hs-workload's limit

// Latency campaigns: the schedule's rate for the cell, from the campaign or from the capacity
// the baseline showed with the per-op timing on (stream ops timed / seconds), recorded in `rec`.
void set_latency_rate(const CampaignSpec& spec, const Json& measurement, Json& rec) {
  const Json& lat = measurement.contains("latency") ? measurement["latency"] : Json::object();
  const double secs = measurement.value("seconds", 0.0);
  const double capacity = secs > 0 ? lat.value("count", 0.0) / secs : 0.0;
  rec["latency_capacity_ops_per_sec"] = capacity;
  const double rate = spec.latency_rate > 0 ? spec.latency_rate : spec.latency_load * capacity;
  if (rate >= 1) rec["latency_rate_ops_per_sec"] = static_cast<std::uint64_t>(std::llround(rate));
}

}  // namespace

Json calibrate_cell(const ResolvedCampaign& c, const std::string& workload, unsigned threads) {
  Json rec{{"workload", workload}, {"threads", threads}, {"allocator", c.baseline}};
  // Latency: calibration runs with the per-op timing on, unthrottled (--latency-rate 0), so
  // samples are sized with the timing cost included and the capacity is measured.
  const std::optional<std::uint64_t> timing =
      c.spec.latency ? std::optional<std::uint64_t>(0) : std::nullopt;
  if (c.spec.fixed_ops > 0) {
    rec["status"] = "fixed";
    rec["ops"] = c.spec.fixed_ops;
    rec["attempts"] = Json::array();
    if (c.spec.latency && c.spec.latency_rate > 0) {
      rec["latency_rate_ops_per_sec"] =
          static_cast<std::uint64_t>(std::llround(c.spec.latency_rate));
    } else if (c.spec.latency) {  // one unthrottled baseline run measures the capacity
      const AllocatorInfo* base = c.allocator(c.baseline);
      SampleRequest req{c.program,        workload, threads,
                        c.spec.fixed_ops, c.seed,   kCalibrationBlock,
                        c.spec.verify,    false,    timing};
      const SampleOutcome o =
          run_sample(sample_argv(req, *base), sample_env(*base), c.spec.timeout_seconds);
      Json attempt{{"ops", c.spec.fixed_ops},
                   {"block", kCalibrationBlock},
                   {"wall_seconds", o.wall_seconds}};
      if (o.ok) {
        attempt["seconds"] = o.measurement.value("seconds", 0.0);
        set_latency_rate(c.spec, o.measurement, rec);
      } else {
        attempt["failure"] = failure_to_json(o);
        rec["status"] = "failed";
        rec["reason"] = o.kind + ": " + o.reason;
      }
      rec["attempts"].push_back(attempt);
    }
    return rec;
  }
  const AllocatorInfo* base = c.allocator(c.baseline);
  const double lo = c.spec.target_min_seconds;
  const double hi = c.spec.target_max_seconds;
  const double mid = (lo + hi) / 2;
  std::uint64_t ops = c.spec.calibration_start_ops;
  Json attempts = Json::array();
  rec["status"] = "unconverged";
  for (int k = 0; k < kCalibrationAttempts; ++k) {
    // No memory protocol: calibration only sizes the samples.
    SampleRequest req{c.program,     workload, threads, ops, c.seed, kCalibrationBlock + k,
                      c.spec.verify, false,    timing};
    const auto argv = sample_argv(req, *base);
    const SampleOutcome o = run_sample(argv, sample_env(*base), c.spec.timeout_seconds);
    Json attempt{{"ops", ops}, {"block", kCalibrationBlock + k}, {"wall_seconds", o.wall_seconds}};
    if (!o.ok) {
      attempt["failure"] = failure_to_json(o);
      attempts.push_back(attempt);
      rec["status"] = "failed";
      rec["reason"] = o.kind + ": " + o.reason;
      break;
    }
    const double secs = o.measurement.value("seconds", 0.0);
    attempt["seconds"] = secs;
    attempts.push_back(attempt);
    rec["ops"] = ops;
    rec["seconds"] = secs;
    if (c.spec.latency) set_latency_rate(c.spec, o.measurement, rec);
    if (secs >= lo && secs <= hi) {
      rec["status"] = "ok";
      break;
    }
    const double factor = std::clamp(secs > 0 ? mid / secs : 16.0, 1.0 / 16, 16.0);
    const auto next = std::clamp<std::uint64_t>(
        static_cast<std::uint64_t>(static_cast<double>(ops) * factor), kMinOps, kMaxOps);
    if (next == ops) break;  // pinned at a limit
    ops = next;
  }
  rec["attempts"] = attempts;
  std::fprintf(stderr, "hsbench: calibrated %s t=%u on %s: %s, ops %s\n", workload.c_str(), threads,
               c.baseline.c_str(), rec["status"].get<std::string>().c_str(),
               rec.contains("ops") ? rec["ops"].dump().c_str() : "-");
  return rec;
}

const Json* find_calibration(const Json& raw, const std::string& workload, unsigned threads) {
  for (const Json& rec : raw["calibration"]) {
    if (rec["workload"] == workload && rec["threads"] == threads) return &rec;
  }
  return nullptr;
}

}  // namespace heapscope::harness
