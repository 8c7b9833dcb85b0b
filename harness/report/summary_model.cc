#include "harness/report/summary_model.h"

#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "stats/bootstrap_seed.h"
#include "stats/quantile.h"

namespace heapscope::harness {

std::string summary_baseline(const Json& raw, const std::string& baseline_override) {
  return baseline_override.empty() ? raw.value("baseline", std::string("glibc"))
                                   : baseline_override;
}

void require_baseline_samples(const Json& raw, const std::string& baseline, bool seen) {
  if (!seen && !raw.at("samples").empty()) {
    throw RawRunError("baseline '" + baseline + "' has no samples in this run");
  }
}

Json failure_entry(const Json& sample) {
  const Json& f = sample.contains("failure") ? sample.at("failure") : Json::object();
  return {{"id", sample.at("id")},
          {"kind", f.value("kind", "unknown")},
          {"reason", f.value("reason", "")}};
}

std::vector<std::string> baseline_first(const std::string& baseline,
                                        const std::vector<std::string>& sorted_ids) {
  std::vector<std::string> order;
  for (const std::string& id : sorted_ids) {
    if (id == baseline) order.push_back(id);
  }
  for (const std::string& id : sorted_ids) {
    if (id != baseline) order.push_back(id);
  }
  return order;
}

Json block_paired_effect(const std::vector<BlockValue>& candidate,
                         const std::vector<BlockValue>& baseline, stats::Direction direction,
                         std::uint64_t run_seed, const std::string& key) {
  std::unordered_map<std::uint64_t, double> base_by_block;
  for (const BlockValue& p : baseline) base_by_block[p.block] = p.value;
  std::vector<double> c, b;
  for (const BlockValue& p : candidate) {
    if (auto it = base_by_block.find(p.block); it != base_by_block.end()) {
      c.push_back(p.value);
      b.push_back(it->second);
    }
  }
  stats::BootstrapConfig config;
  config.seed = stats::bootstrap_seed(run_seed, key);
  return paired_effect_to_json(stats::paired_effect(c, b, direction, config));
}

Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(); }

Json summary_to_json(const stats::Summary& s) {
  return {{"median", number_or_null(s.median)},
          {"q1", number_or_null(s.q1)},
          {"q3", number_or_null(s.q3)},
          {"iqr", number_or_null(s.iqr)},
          {"min", number_or_null(s.min)},
          {"max", number_or_null(s.max)},
          {"relative_iqr", number_or_null(s.relative_iqr)}};
}

Json paired_effect_to_json(const stats::PairedEffect& e) {
  Json j{{"paired_blocks", e.blocks},
         {"effect", number_or_null(e.effect)},
         {"ci_low", number_or_null(e.ci_low)},
         {"ci_high", number_or_null(e.ci_high)},
         {"mde_ratio", number_or_null(e.mde_ratio)},
         {"ci_valid", e.ci_valid},
         {"bootstrap_seed", e.seed}};
  if (!e.problem.empty()) j["problem"] = e.problem;
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

Json summary_envelope(const Json& raw, const std::string& campaign, std::uint64_t seed,
                      const std::string& baseline, const Json& metric) {
  Json summary{{"schema", kSummarySchema},
               {"schema_version", kSummarySchemaVersion},
               {"campaign", campaign},
               {"seed", seed},
               {"baseline", baseline}};
  for (const auto& [key, value] : metric.items()) summary[key] = value;
  summary["effect_method"] = stats::kPairedEffectMethod;
  summary["mde_method"] = stats::kMdeMethod;
  summary["bootstrap_seed_method"] = stats::kBootstrapSeedMethod;
  summary["resamples"] = 10000;
  summary["confidence"] = 0.95;
  summary["complete"] = raw.value("complete", false);
  summary["hosts"] = raw.contains("hosts") ? raw.at("hosts") : Json::array();
  return summary;
}

Json unavailable_allocators_json(const Json& raw) {
  Json unavailable = Json::array();
  for (const Json& a : raw.at("allocators")) {
    if (!a.value("available", false)) {
      unavailable.push_back({{"id", a.value("id", "")}, {"reason", a.value("reason", "")}});
    }
  }
  return unavailable;
}

void finish_summary(Json& summary, const Json& raw, Json cells, Json failures) {
  summary["samples"] = {{"total", raw.at("samples").size()},
                        {"ok", raw.at("samples").size() - failures.size()},
                        {"failed", failures.size()}};
  summary["cells"] = std::move(cells);
  summary["failures"] = std::move(failures);
  summary["unavailable_allocators"] = unavailable_allocators_json(raw);
}

std::string fixed_number(const Json& v, int digits, double scale) {
  if (!v.is_number()) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v.get<double>() * scale);
  return buf;
}

std::string effect_text(const Json& e) {
  if (e.is_null()) return "(baseline)";
  std::string s = fixed_number(e.at("effect"), 3);
  if (e.value("ci_valid", false)) {
    s += " [" + fixed_number(e.at("ci_low"), 3) + ", " + fixed_number(e.at("ci_high"), 3) + "]";
    if (e.at("ci_low").get<double>() > 1 || e.at("ci_high").get<double>() < 1) s += " *";
  }
  return s;
}

std::string sample_count_text(const Json& row) {
  std::string n = std::to_string(row.at("n").get<std::size_t>());
  if (row.at("failed").get<std::size_t>() > 0) {
    n += '+' + std::to_string(row.at("failed").get<std::size_t>()) + 'F';
  }
  return n;
}

void print_unavailable_and_failed(std::ostream& out, const Json& summary) {
  for (const Json& u : summary.at("unavailable_allocators")) {
    out << "unavailable: " << u.at("id").get<std::string>() << ": "
        << u.at("reason").get<std::string>() << "\n";
  }
  for (const Json& f : summary.at("failures")) {
    out << "failed: " << f.at("id").get<std::string>() << ": " << f.at("kind").get<std::string>()
        << ": " << f.at("reason").get<std::string>() << "\n";
  }
}

}  // namespace heapscope::harness
