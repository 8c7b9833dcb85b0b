#include "harness/report/suite_report.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <vector>

#include "harness/campaign/raw_run_header.h"
#include "harness/report/summary_model.h"
#include "stats/bootstrap_seed.h"
#include "stats/geomean_effect.h"
#include "stats/quantile.h"

namespace heapscope::harness {
namespace {

constexpr double kNoSuiteValue = std::numeric_limits<double>::quiet_NaN();

struct SuitePoint {
  std::uint64_t block;
  double metric, wall, rss;
};

std::vector<BlockValue> suite_by_block(const std::vector<SuitePoint>& points,
                                       double SuitePoint::*field) {
  std::vector<BlockValue> out;
  for (const SuitePoint& p : points) out.push_back({p.block, p.*field});
  return out;
}

std::vector<double> suite_column(const std::vector<SuitePoint>& points, double SuitePoint::*field) {
  std::vector<double> out;
  for (const SuitePoint& p : points) out.push_back(p.*field);
  return out;
}

// Per-block log effects of `cand` against `base` over the blocks both completed.
std::vector<double> paired_logs(const std::vector<SuitePoint>& cand,
                                const std::vector<SuitePoint>& base, double SuitePoint::*field,
                                stats::Direction direction) {
  std::map<std::uint64_t, double> base_by_block;
  for (const SuitePoint& p : base) base_by_block[p.block] = p.*field;
  std::vector<double> c, b;
  for (const SuitePoint& p : cand) {
    if (auto it = base_by_block.find(p.block); it != base_by_block.end()) {
      c.push_back(p.*field);
      b.push_back(it->second);
    }
  }
  std::string problem;
  return stats::log_effects(c, b, direction, &problem);
}

Json geomean_json(const stats::GeomeanEffect& g) {
  return {{"cases", g.cases},
          {"effect", number_or_null(g.effect)},
          {"ci_low", number_or_null(g.ci_low)},
          {"ci_high", number_or_null(g.ci_high)},
          {"ci_valid", g.ci_valid},
          {"problem", g.problem},
          {"note", g.note},
          {"bootstrap_seed", g.seed},
          {"resamples", g.resamples},
          {"confidence", g.confidence}};
}

struct CaseData {  // NOLINT(bugprone-exception-escape): implicit members of a json holder
  std::string name;
  Json record;  // the raw run's suite.cases entry
  std::map<std::string, std::vector<SuitePoint>> ok;
  std::map<std::string, std::size_t> failed;
  stats::Direction direction = stats::Direction::kLowerIsBetter;
  std::string baseline;
};

}  // namespace

bool is_suite_run(const Json& raw) { return raw.is_object() && raw.contains("suite"); }

Json summarize_suite_run(const Json& raw, const std::string& baseline_override) {
  const std::string baseline = summary_baseline(raw, baseline_override);
  const auto seed = raw.at("seed").get<std::uint64_t>();
  const Json& suite = raw.at("suite");
  const std::string campaign = raw.at("campaign").value("name", std::string("suite"));

  std::vector<CaseData> cases;
  std::map<std::string, std::size_t> index;
  for (const Json& rec : suite.at("cases")) {
    CaseData d;
    d.name = rec.at("name").get<std::string>();
    d.record = rec;
    d.direction = rec.at("metric").value("direction", "") == "higher-is-better"
                      ? stats::Direction::kHigherIsBetter
                      : stats::Direction::kLowerIsBetter;
    // A case with its own baseline keeps it; the others follow the override.
    const std::string own = rec.value("baseline", "");
    const bool case_own = !own.empty() && own != raw.at("baseline").get<std::string>();
    d.baseline = case_own ? own : baseline;
    index[d.name] = cases.size();
    cases.push_back(std::move(d));
  }
  Json failures = Json::array();
  for (const Json& s : raw.at("samples")) {
    const auto it = index.find(s.at("workload").get<std::string>());
    if (it == index.end()) throw RawRunError("sample " + s.value("id", "") + " has no case");
    CaseData& d = cases[it->second];
    const auto alloc = s.at("allocator").get<std::string>();
    if (s.at("status") == "ok") {
      const Json& m = s.at("measurement");
      d.ok[alloc].push_back(
          {s.at("block").get<std::uint64_t>(),
           m.at("metric").is_number() ? m.at("metric").get<double>() : kNoSuiteValue,
           m.value("wall_seconds", kNoSuiteValue), m.value("rss_bytes", kNoSuiteValue)});
    } else {
      ++d.failed[alloc];
      d.ok.try_emplace(alloc);
      failures.push_back(failure_entry(s));
    }
  }

  Json cells = Json::array();
  Json case_meta = Json::array();
  // logs[allocator][metric or rss] = per-case log effects of the cases in the geomean.
  std::map<std::string, std::vector<std::vector<double>>> metric_logs, rss_logs;
  std::map<std::string, Json> left_out;
  std::vector<std::string> geomean_cases;
  for (const CaseData& d : cases) {
    const Json& rec = d.record;
    const Json probe = rec.value("probe", Json::object());
    const bool in_geomean = rec.value("status", "") == "ok" && d.baseline == baseline &&
                            d.ok.contains(baseline) && !d.ok.at(baseline).empty();
    std::string why_out;
    if (rec.value("status", "") != "ok") {
      why_out = rec.value("status", "") + ": " + rec.value("reason", "");
    } else if (d.baseline != baseline) {
      why_out = "measured against " + d.baseline + ", not " + baseline + ": " +
                rec.value("baseline_reason", "");
    } else if (!in_geomean) {
      why_out = "no successful sample of " + baseline;
    }
    case_meta.push_back({{"name", d.name},
                         {"description", rec.value("description", "")},
                         {"status", rec.value("status", "")},
                         {"reason", rec.value("reason", "")},
                         {"baseline", d.baseline},
                         {"in_geomean", in_geomean},
                         {"left_out_because", why_out},
                         {"metric", rec.at("metric")},
                         {"rss", rec.value("rss", "command")},
                         {"note", rec.value("note", "")},
                         {"problems", probe.value("problems", Json::array())},
                         {"notes", probe.value("notes", Json::array())}});
    if (in_geomean) geomean_cases.push_back(d.name);
    if (d.ok.empty()) continue;
    std::vector<std::string> ids;
    for (const auto& [id, _] : d.ok) ids.push_back(id);
    Json rows = Json::array();
    const bool has_base = d.ok.contains(d.baseline);
    for (const std::string& id : baseline_first(d.baseline, ids)) {
      const std::vector<SuitePoint>& pts = d.ok.at(id);
      Json row{
          {"allocator", id},
          {"n", pts.size()},
          {"failed", d.failed.contains(id) ? d.failed.at(id) : 0},
          {"metric", summary_to_json(stats::summarize(suite_column(pts, &SuitePoint::metric)))},
          {"wall_seconds", summary_to_json(stats::summarize(suite_column(pts, &SuitePoint::wall)))},
          {"rss_bytes", summary_to_json(stats::summarize(suite_column(pts, &SuitePoint::rss)))}};
      if (id == d.baseline || !has_base) {
        row["effect_vs_baseline"] = nullptr;
        row["rss_effect_vs_baseline"] = nullptr;
      } else {
        const std::vector<SuitePoint>& base = d.ok.at(d.baseline);
        const std::string key = d.name + "/1/";
        row["effect_vs_baseline"] = block_paired_effect(
            suite_by_block(pts, &SuitePoint::metric), suite_by_block(base, &SuitePoint::metric),
            d.direction, seed, key + "metric/" + id + "/" + d.baseline);
        row["rss_effect_vs_baseline"] = block_paired_effect(
            suite_by_block(pts, &SuitePoint::rss), suite_by_block(base, &SuitePoint::rss),
            stats::Direction::kLowerIsBetter, seed, key + "rss_bytes/" + id + "/" + d.baseline);
        if (in_geomean) {
          metric_logs[id].push_back(paired_logs(pts, base, &SuitePoint::metric, d.direction));
          rss_logs[id].push_back(
              paired_logs(pts, base, &SuitePoint::rss, stats::Direction::kLowerIsBetter));
        }
      }
      rows.push_back(row);
    }
    cells.push_back({{"workload", d.name},
                     {"threads", 1},
                     {"oversubscribed", false},
                     {"allocators", rows},
                     {"digest_mismatches", Json::array()}});
  }

  // The headline: one row per allocator measured in a geomean case, the baseline excluded.
  Json geomean = Json::array();
  std::vector<std::string> all_ids;
  for (const Json& a : raw.at("active_allocators")) all_ids.push_back(a.get<std::string>());
  for (const std::string& id : all_ids) {
    if (id == baseline) continue;
    Json out_cases = Json::array();
    for (const CaseData& d : cases) {
      const bool measured = d.ok.contains(id) && !d.ok.at(id).empty();
      const bool counted =
          std::find(geomean_cases.begin(), geomean_cases.end(), d.name) != geomean_cases.end();
      if (counted && !measured) {
        out_cases.push_back({{"case", d.name}, {"reason", id + " not measured in this case"}});
      } else if (!counted) {
        std::string why;
        for (const Json& m : case_meta) {
          if (m["name"] == d.name) why = m["left_out_because"].get<std::string>();
        }
        out_cases.push_back({{"case", d.name}, {"reason", why}});
      }
    }
    stats::BootstrapConfig mc;
    mc.seed = stats::bootstrap_seed(seed, "suite/geomean/metric/" + id + "/" + baseline);
    stats::BootstrapConfig rc;
    rc.seed = stats::bootstrap_seed(seed, "suite/geomean/rss_bytes/" + id + "/" + baseline);
    const std::vector<std::vector<double>>& ml = metric_logs[id];
    const std::vector<std::vector<double>>& rl = rss_logs[id];
    geomean.push_back({{"allocator", id},
                       {"metric_effect", geomean_json(stats::geomean_effect(ml, mc))},
                       {"rss_effect", geomean_json(stats::geomean_effect(rl, rc))},
                       {"left_out", out_cases}});
  }

  Json summary = summary_envelope(
      raw, campaign, seed, baseline,
      {{"metric", "suite"},
       {"effect_definition",
        "per case exp(median over blocks of the log ratio), oriented so > 1 = better than the "
        "case's baseline (faster, more throughput, less peak RSS); geomean = exp(mean over "
        "cases of those log effects)"}});
  summary["suite"] = {{"name", suite.value("name", "")},
                      {"input_seed", suite.value("input_seed", 0)},
                      {"blocks", suite.value("blocks", 0)},
                      {"quick", suite.value("quick", false)},
                      {"geomean_method", stats::kGeomeanMethod},
                      {"geomean_cases", geomean_cases},
                      {"cases", case_meta},
                      {"geomean", geomean}};
  finish_summary(summary, raw, std::move(cells), std::move(failures));
  return summary;
}

void print_suite_report(std::ostream& out, const Json& summary) {
  const std::string base = summary.at("baseline").get<std::string>();
  const Json& suite = summary.at("suite");
  out << summary.at("campaign").get<std::string>() << ": " << suite.at("cases").size() << " cases, "
      << suite.at("blocks") << " blocks" << (suite.value("quick", false) ? " (quick)" : "")
      << ", seed " << hex64(summary.at("seed").get<std::uint64_t>()) << ", input seed "
      << suite.at("input_seed") << ", baseline " << base << "\n"
      << "medians (IQR). effect = paired per block against the case's baseline, > 1 = better "
         "(faster or more\nthroughput; less peak RSS), < 1 = worse; [95% bootstrap CI], * = CI "
         "excludes 1.0\n";
  char line[640];
  std::snprintf(line, sizeof line, "%-10s %-14s %5s %-26s %-16s %-28s %s\n", "case", "allocator",
                "n", "metric (IQR)", "RSS MiB (IQR)", "metric effect [95% CI]",
                "memory effect [95% CI]");
  out << line;
  std::map<std::string, Json> meta;
  for (const Json& m : suite.at("cases")) meta[m.at("name").get<std::string>()] = m;
  for (const Json& cell : summary.at("cells")) {
    const std::string name = cell.at("workload").get<std::string>();
    const Json& m = meta[name];
    const Json& metric = m.at("metric");
    const bool tput = metric.value("kind", "") == "throughput";
    for (const Json& row : cell.at("allocators")) {
      const Json& v = row.at("metric");
      const Json& rss = row.at("rss_bytes");
      const int digits = tput ? 0 : 3;
      const std::string metric_text = fixed_number(v.at("median"), digits) + " (" +
                                      fixed_number(v.at("iqr"), digits) + ")" +
                                      (tput ? " " + metric.value("unit", "") : " s");
      const std::string rss_text = fixed_number(rss.at("median"), 1, 1.0 / 1048576) + " (" +
                                   fixed_number(rss.at("iqr"), 1, 1.0 / 1048576) + ")";
      std::snprintf(line, sizeof line, "%-10s %-14s %5s %-26s %-16s %-28s %s\n", name.c_str(),
                    row.at("allocator").get<std::string>().c_str(), sample_count_text(row).c_str(),
                    metric_text.c_str(), rss_text.c_str(),
                    effect_text(row.at("effect_vs_baseline")).c_str(),
                    effect_text(row.at("rss_effect_vs_baseline")).c_str());
      out << line;
    }
    if (m.value("baseline", base) != base) {
      out << "  " << name << ": baseline " << m.value("baseline", "") << " ("
          << m.value("left_out_because", "") << ")\n";
    }
  }
  out << "\ngeometric mean over the " << suite.at("geomean_cases").size() << " cases measured "
      << "against " << base << " (blocks resampled within each case):\n";
  std::snprintf(line, sizeof line, "%-14s %5s %-28s %-28s %s\n", "allocator", "cases",
                "speed vs base [95% CI]", "memory vs base [95% CI]", "left out");
  out << line;
  const auto geo_text = [](const Json& g) {
    if (!g.at("effect").is_number()) return std::string("-");
    char buf[96];
    if (!g.value("ci_valid", false)) {
      std::snprintf(buf, sizeof buf, "%.3f", g.at("effect").get<double>());
      return std::string(buf);
    }
    const double lo = g.at("ci_low").get<double>();
    const double hi = g.at("ci_high").get<double>();
    std::snprintf(buf, sizeof buf, "%.3f [%.3f, %.3f]%s", g.at("effect").get<double>(), lo, hi,
                  lo > 1.0 || hi < 1.0 ? " *" : "");
    return std::string(buf);
  };
  for (const Json& g : suite.at("geomean")) {
    std::string left;
    for (const Json& l : g.at("left_out")) {
      left += (left.empty() ? "" : ", ") + l.at("case").get<std::string>();
    }
    std::snprintf(line, sizeof line, "%-14s %5s %-28s %-28s %s\n",
                  g.at("allocator").get<std::string>().c_str(),
                  std::to_string(g.at("metric_effect").at("cases").get<std::size_t>()).c_str(),
                  geo_text(g.at("metric_effect")).c_str(), geo_text(g.at("rss_effect")).c_str(),
                  left.empty() ? "-" : left.c_str());
    out << line;
  }
  out << "n+kF = k failed samples (not in the statistics). samples: "
      << summary.at("samples").at("ok") << " ok, " << summary.at("samples").at("failed")
      << " failed\n";
  for (const Json& m : suite.at("cases")) {
    const std::string name = m.at("name").get<std::string>();
    if (m.value("status", "") != "ok") {
      out << "case " << name << " " << m.value("status", "") << ": " << m.value("reason", "")
          << "\n";
    }
    for (const Json& n : m.at("notes"))
      out << "note (" << name << "): " << n.get<std::string>() << "\n";
    if (!m.value("note", "").empty())
      out << "note (" << name << "): " << m.value("note", "") << "\n";
  }
  print_unavailable_and_failed(out, summary);
}

}  // namespace heapscope::harness
