#include "envelope.h"

#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "comparison_key.h"
#include "representative_samples.h"

namespace heapscope::site {
namespace {

std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s) {
    out +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  }
  return out.empty() ? "run" : out;
}

std::string seed_hex(const Json& raw) {
  if (raw.contains("seed_hex")) {
    std::string s = raw["seed_hex"].get<std::string>();
    return s.rfind("0x", 0) == 0 ? s.substr(2) : s;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(raw["seed"].get<std::uint64_t>()));
  return buf;
}

Json machine_of(const Json& raw) {
  Json first = raw.contains("hosts") && !raw["hosts"].empty() ? raw["hosts"][0] : Json::object();
  std::set<std::string> names;
  long nproc = -1;
  if (raw.contains("hosts")) {
    for (const Json& h : raw["hosts"]) {
      names.insert(h.value("hostname", ""));
      const long n = h.value("nproc", 0L);
      nproc = nproc < 0 ? n : std::min(nproc, n);  // the smallest host decides oversubscription
    }
  }
  return Json{{"cpu_model", first.value("cpu_model", "")},
              {"machine", first.value("machine", "")},
              {"sysname", first.value("sysname", "")},
              {"nproc", std::max(nproc, 0L)},
              {"mem_total_kb", first.value("mem_total_kb", 0ULL)},
              {"hostnames", names}};
}

Json allocators_of(const Json& raw) {
  Json list = Json::array();
  for (const Json& a : raw["allocators"]) {
    Json row{{"id", a["id"]},
             {"package", a.value("package", "")},
             {"version", a.value("version", "")},
             {"sha256", a.value("sha256", "")},
             {"available", a.value("available", true)},
             {"env", a.contains("env") ? a["env"] : Json::object()}};
    if (a.contains("reason")) row["reason"] = a["reason"];
    list.push_back(row);
  }
  return list;
}

Json methodology_of(const Json& raw, const Json& summary) {
  Json m{{"metric", summary["metric"]},
         {"direction", summary.value("direction", "higher-is-better")},
         {"effect_method", summary["effect_method"]},
         {"mde_method", summary.value("mde_method", "")},
         {"bootstrap_seed_method", summary.value("bootstrap_seed_method", "")},
         {"resamples", summary["resamples"]},
         {"confidence", summary["confidence"]},
         {"block_order_method", raw.value("block_order_method", "")},
         {"effect_orientation", "> 1 = the candidate is better than the baseline"},
         {"headline", "geometric mean over cells of the paired effect vs the baseline"}};
  return m;
}

// What this run's summary has no data for, each with the reason and how to collect it.
Json not_collected(const Json& summary) {
  bool timeline = false, latency = false;
  for (const Json& cell : summary["cells"]) {
    for (const Json& row : cell["allocators"]) {
      timeline |= row.contains("memory") && row["memory"].contains("timeline");
      latency |= row.contains("latency");
    }
  }
  const bool pairs = summary.contains("pairs") && !summary["pairs"].empty();
  Json out = Json::array();
  if (!timeline) {
    out.push_back({{"metric", "memory-timeline"},
                   {"reason",
                    "this run has no RSS timelines (the memory protocol records them from raw-run "
                    "schema version 4; application runs have none)"}});
  }
  if (!latency) {
    out.push_back({{"metric", "latency"},
                   {"reason", "this run did not measure latency (hsbench run --latency)"}});
  }
  if (!pairs) {
    out.push_back({{"metric", "profiler-tax"},
                   {"reason",
                    "this run has no paired comparisons besides the baseline's (the tax campaign, "
                    "or hsbench run --pair CANDIDATE:REFERENCE)"}});
  }
  return out;
}

// The raw run as shipped: whole when small, else only the representative samples.
std::pair<std::string, std::size_t> raw_copy(const RunInput& in) {
  if (in.text.size() <= kWholeRawCopyLimit) return {in.text, in.raw["samples"].size()};
  std::set<const Json*> keep;
  for (const auto& [key, sample] : representative_samples(in.raw)) keep.insert(sample);
  Json subset = Json::object();
  for (const auto& [key, value] : in.raw.items()) {
    if (key != "samples") subset[key] = value;
  }
  subset["samples"] = Json::array();
  for (const Json& s : in.raw["samples"]) {
    if (keep.contains(&s)) subset["samples"].push_back(s);
  }
  const std::size_t n = subset["samples"].size();
  return {subset.dump(1) + "\n", n};
}

}  // namespace

std::string run_id(const Json& raw, const std::string& sha256) {
  std::string when;
  if (raw.contains("created")) {
    for (char c : raw["created"].get<std::string>()) {
      if (std::isalnum(static_cast<unsigned char>(c))) when += c;
    }
  }
  if (when.empty()) when = sha256.substr(0, 12);
  return safe_name(raw["campaign"]["name"].get<std::string>()) + "-" + safe_name(when) + "-" +
         seed_hex(raw);
}

Json headline_numbers(const Json& summary) {
  Json out = Json::array();
  std::map<std::string, std::pair<double, std::size_t>> sums;  // id -> (sum of logs, cells)
  std::vector<std::string> order;
  for (const Json& cell : summary["cells"]) {
    for (const Json& row : cell["allocators"]) {
      const auto id = row["allocator"].get<std::string>();
      if (id == summary["baseline"]) continue;
      if (!sums.contains(id)) order.push_back(id);
      auto& [sum, n] = sums[id];
      const Json& e = row["effect_vs_baseline"];
      if (e.is_object() && e["effect"].is_number() && e["effect"].get<double>() > 0) {
        sum += std::log(e["effect"].get<double>());
        ++n;
      }
    }
  }
  for (const std::string& id : order) {
    const auto [sum, n] = sums[id];
    out.push_back(
        {{"allocator", id},
         {"geomean_effect", n > 0 ? Json(std::exp(sum / static_cast<double>(n))) : Json()},
         {"cells", n}});
  }
  return out;
}

PublishedRun publish_run(const RunInput& in) {
  const Json& raw = in.raw;
  const std::string id = run_id(raw, in.sha256);
  const std::string baseline = in.summary["baseline"].get<std::string>();
  auto [copy_text, copy_samples] = raw_copy(in);
  PublishedRun out;
  out.copy_path = "raw/" + id + ".json";
  out.copy_text = std::move(copy_text);
  const Json& tool = raw.contains("tool") ? raw["tool"] : Json::object();
  out.entry = Json{
      {"run_id", id},
      {"campaign", raw["campaign"]["name"]},
      {"created", raw.contains("created") ? raw["created"] : Json()},
      {"series",
       {{"engine_version", tool.contains("engine_version") ? tool["engine_version"] : Json()}}},
      {"comparison_key", comparison_key(raw, baseline)},
      {"raw",
       {{"source_sha256", in.sha256},
        {"source_bytes", in.text.size()},
        {"copy", out.copy_path},
        {"copy_is_complete", copy_samples == raw["samples"].size()},
        {"samples_total", raw["samples"].size()},
        {"samples_in_copy", copy_samples}}},
      {"seed", raw["seed"]},
      {"seed_hex", seed_hex(raw)},
      {"baseline", baseline},
      {"machine", machine_of(raw)},
      {"allocators", allocators_of(raw)},
      {"methodology", methodology_of(raw, in.summary)},
      {"summary", in.summary},
      {"headline", headline_numbers(in.summary)},
  };
  if (raw.contains("application")) out.entry["application"] = raw["application"];
  out.entry["not_collected"] = not_collected(in.summary);
  return out;
}

Json latest_envelope(const std::vector<PublishedRun>& runs) {
  Json list = Json::array();
  for (const PublishedRun& r : runs) list.push_back(r.entry);
  return Json{{"schema", kLatestSchema},
              {"schema_version", kLatestSchemaVersion},
              {"generator", "hsbench publish"},
              {"runs", list}};
}

}  // namespace heapscope::site
