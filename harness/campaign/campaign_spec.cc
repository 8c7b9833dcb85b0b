#include "harness/campaign/campaign_spec.h"

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "base/json_depth.h"
#include "workloads/names.h"

namespace heapscope::harness {
namespace {

using Json = nlohmann::ordered_json;

template <class T>
T get_or(const Json& j, const char* key, T fallback) {
  if (!j.contains(key) || j.at(key).is_null()) return fallback;
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw CampaignError(std::string("campaign field '") + key +
                        "' has the wrong type: " + e.what());
  }
}

// A count or seed: nlohmann's get<unsigned>() would wrap -1 to 4294967295 and make a float out
// of range (1e300) undefined behaviour, so only whole numbers that fit are taken.
template <class T>
T whole_number(const Json& v, const std::string& what) {
  constexpr std::uint64_t kMax = std::numeric_limits<T>::max();
  const bool fits =
      v.is_number_unsigned() ? v.get<std::uint64_t>() <= kMax
      : v.is_number_integer()
          ? v.get<std::int64_t>() >= 0 && static_cast<std::uint64_t>(v.get<std::int64_t>()) <= kMax
          : false;
  if (!fits) {
    throw CampaignError(what + " must be a whole number from 0 to " + std::to_string(kMax) +
                        ", not " + v.dump());
  }
  return v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>())
                                : static_cast<T>(v.get<std::int64_t>());
}

template <class T>
T whole_or(const Json& j, const char* key, T fallback) {
  if (!j.contains(key) || j.at(key).is_null()) return fallback;
  return whole_number<T>(j.at(key), std::string("campaign field '") + key + "'");
}

std::vector<unsigned> thread_points(const Json& j) {
  if (!j.contains("threads") || j.at("threads").is_null()) return {1};
  if (!j.at("threads").is_array()) throw CampaignError("campaign field 'threads' is not a list");
  std::vector<unsigned> threads;
  for (const Json& t : j.at("threads"))
    threads.push_back(whole_number<unsigned>(t, "a thread point"));
  return threads;
}

}  // namespace

std::optional<CampaignSpec> builtin_campaign(const std::string& name) {
  CampaignSpec spec;
  spec.name = name;
  if (name == "quick") {
    spec.workloads = {"tiny-hot", "general-mix", "cross-thread", "sawtooth"};
    spec.threads = {1, 2};
    spec.blocks = 5;
    spec.target_min_seconds = 0.1;
    spec.target_max_seconds = 0.3;
    spec.timeout_seconds = 60;
    spec.return_points_seconds = {0.1};
    return spec;
  }
  if (name == "quick-latency") {  // quick's settings, two of its workloads, paced
    spec = *builtin_campaign("quick");
    spec.name = name;
    spec.workloads = {"tiny-hot", "general-mix"};
    spec.latency = true;
    return spec;
  }
  if (name == "tax") {
    spec.workloads = {"tiny-hot", "general-mix", "cross-thread"};
    spec.threads = {1, 2};
    spec.blocks = 11;
    spec.target_min_seconds = 0.2;
    spec.target_max_seconds = 0.5;
    spec.timeout_seconds = 60;
    spec.return_points_seconds = {0.1};
    spec.allocators = {"engine-noprof", "engine",        "engine-prof",  "jemalloc",
                       "jemalloc-prof", "tcmalloc-full", "tcmalloc-prof"};
    spec.baseline = "engine";
    spec.pairs = {{"engine", "engine-noprof"},
                  {"engine-prof", "engine"},
                  {"jemalloc-prof", "jemalloc"},
                  {"tcmalloc-prof", "tcmalloc-full"}};
    return spec;
  }
  if (name == "headline") {
    spec.workloads.assign(workloads::kWorkloadNames.begin(), workloads::kWorkloadNames.end());
    spec.threads = {1, 2, 4, 8, 16};
    spec.blocks = 20;
    spec.target_min_seconds = 0.5;
    spec.target_max_seconds = 2.0;
    spec.calibration_start_ops = 1'000'000;
    spec.timeout_seconds = 120;
    return spec;
  }
  return std::nullopt;
}

Json campaign_to_json(const CampaignSpec& spec) {
  Json j{{"name", spec.name},
         {"workloads", spec.workloads},
         {"threads", spec.threads},
         {"allocators", spec.allocators},
         {"user_allocators", spec.user_allocators},
         {"blocks", spec.blocks},
         {"seed", spec.seed ? Json(*spec.seed) : Json()},
         {"baseline", spec.baseline},
         {"target_seconds", {spec.target_min_seconds, spec.target_max_seconds}},
         {"ops", spec.fixed_ops},
         {"calibration_start_ops", spec.calibration_start_ops},
         {"timeout_seconds", spec.timeout_seconds},
         {"verify", spec.verify},
         {"memory", spec.memory},
         {"return_points_seconds", spec.return_points_seconds}};
  // Only latency campaigns carry the fields, so other campaigns' JSON is as before.
  if (spec.latency) {
    j["latency"] = true;
    j["latency_rate"] = spec.latency_rate;
    j["latency_load"] = spec.latency_load;
  }
  if (!spec.pairs.empty()) {
    Json pairs = Json::array();
    for (const ComparisonPair& p : spec.pairs) pairs.push_back({p.candidate, p.reference});
    j["pairs"] = std::move(pairs);
  }
  return j;
}

ComparisonPair parse_pair(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size() ||
      text.find(':', colon + 1) != std::string::npos) {
    throw CampaignError("a pair is CANDIDATE:REFERENCE (two allocator ids), not '" + text + "'");
  }
  return {text.substr(0, colon), text.substr(colon + 1)};
}

CampaignSpec campaign_from_json(const Json& j) {
  if (!j.is_object()) throw CampaignError("a campaign must be a JSON object");
  static const std::set<std::string> known = {"name",
                                              "workloads",
                                              "threads",
                                              "allocators",
                                              "user_allocators",
                                              "blocks",
                                              "seed",
                                              "baseline",
                                              "target_seconds",
                                              "ops",
                                              "calibration_start_ops",
                                              "timeout_seconds",
                                              "verify",
                                              "memory",
                                              "return_points_seconds",
                                              "latency",
                                              "latency_rate",
                                              "latency_load",
                                              "pairs",
                                              "description"};
  for (const auto& item : j.items()) {
    if (!known.contains(item.key())) {
      throw CampaignError("unknown campaign field '" + item.key() + "'");
    }
  }
  CampaignSpec spec;
  spec.name = get_or<std::string>(j, "name", "custom");
  spec.workloads = get_or<std::vector<std::string>>(j, "workloads", {});
  spec.threads = thread_points(j);
  spec.allocators = get_or<std::vector<std::string>>(j, "allocators", {});
  spec.user_allocators = get_or<std::vector<std::string>>(j, "user_allocators", {});
  spec.blocks = whole_or<unsigned>(j, "blocks", spec.blocks);
  if (j.contains("seed") && !j.at("seed").is_null())
    spec.seed = whole_or<std::uint64_t>(j, "seed", 0);
  spec.baseline = get_or<std::string>(j, "baseline", "");
  const auto target = get_or<std::vector<double>>(
      j, "target_seconds", {spec.target_min_seconds, spec.target_max_seconds});
  if (target.size() != 2) throw CampaignError("target_seconds must be [min, max]");
  spec.target_min_seconds = target[0];
  spec.target_max_seconds = target[1];
  spec.fixed_ops = whole_or<std::uint64_t>(j, "ops", 0);
  spec.calibration_start_ops =
      whole_or<std::uint64_t>(j, "calibration_start_ops", spec.calibration_start_ops);
  spec.timeout_seconds = get_or<double>(j, "timeout_seconds", spec.timeout_seconds);
  spec.verify = get_or<bool>(j, "verify", false);
  spec.memory = get_or<bool>(j, "memory", spec.memory);
  spec.return_points_seconds =
      get_or<std::vector<double>>(j, "return_points_seconds", spec.return_points_seconds);
  spec.latency = get_or<bool>(j, "latency", false);
  spec.latency_rate = get_or<double>(j, "latency_rate", spec.latency_rate);
  spec.latency_load = get_or<double>(j, "latency_load", spec.latency_load);
  if (j.contains("pairs")) {
    const Json& pairs = j.at("pairs");
    if (!pairs.is_array()) throw CampaignError("pairs must be an array of [candidate, reference]");
    for (const Json& p : pairs) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string()) {
        throw CampaignError("each pair must be [candidate, reference], two allocator ids");
      }
      spec.pairs.push_back({p[0].get<std::string>(), p[1].get<std::string>()});
    }
  }
  validate_campaign(spec);
  return spec;
}

CampaignSpec load_campaign(const std::string& name_or_path) {
  if (auto spec = builtin_campaign(name_or_path)) return *spec;
  std::ifstream in(name_or_path);
  if (!in) {
    throw CampaignError(
        "campaign '" + name_or_path +
        "' is neither a built-in (quick, quick-latency, headline, tax) nor a readable file");
  }
  std::stringstream text;
  text << in.rdbuf();
  if (base::json_nesting_depth(text.str()) > base::kMaxJsonNesting) {
    throw CampaignError("campaign file " + name_or_path + " is nested deeper than " +
                        std::to_string(base::kMaxJsonNesting) + " levels");
  }
  Json j;
  try {
    j = Json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw CampaignError("campaign file " + name_or_path + " is not valid JSON: " + e.what());
  }
  return campaign_from_json(j);
}

void validate_campaign(const CampaignSpec& spec) {
  if (spec.workloads.empty()) throw CampaignError("the campaign lists no workloads");
  if (spec.threads.empty()) throw CampaignError("the campaign lists no thread points");
  for (unsigned t : spec.threads) {
    if (t == 0 || t > 256)
      throw CampaignError("thread point " + std::to_string(t) + " out of range");
  }
  if (spec.blocks == 0) throw CampaignError("a campaign needs at least one block");
  if (!(spec.target_min_seconds > 0) || spec.target_max_seconds < spec.target_min_seconds) {
    throw CampaignError("target_seconds must satisfy 0 < min <= max");
  }
  if (!(spec.timeout_seconds > 0)) throw CampaignError("timeout_seconds must be > 0");
  for (std::size_t i = 0; i < spec.return_points_seconds.size(); ++i) {
    const double p = spec.return_points_seconds[i];
    if (!(p > 0 && p <= 60) || (i > 0 && !(p > spec.return_points_seconds[i - 1])))
      throw CampaignError("return_points_seconds must be ascending, each in (0, 60]");
  }
  if (!(spec.latency_rate >= 0 && spec.latency_rate <= 1e12))
    throw CampaignError("latency_rate must be in [0, 1e12] ops/s (0: derived from calibration)");
  if (!(spec.latency_load > 0 && spec.latency_load <= 1))
    throw CampaignError("latency_load must be in (0, 1]");
  if (spec.fixed_ops == 0 && spec.calibration_start_ops == 0) {
    throw CampaignError("calibration_start_ops must be > 0");
  }
  std::set<std::string> seen;
  for (const auto& w : spec.workloads) {
    if (!seen.insert(w).second) throw CampaignError("workload '" + w + "' is listed twice");
  }
  for (std::size_t i = 0; i < spec.pairs.size(); ++i) {
    const ComparisonPair& p = spec.pairs[i];
    if (p.candidate.empty() || p.reference.empty() || p.candidate == p.reference) {
      throw CampaignError("pair '" + p.candidate + ":" + p.reference +
                          "' needs two different allocator ids");
    }
    for (std::size_t k = 0; k < i; ++k) {
      if (spec.pairs[k] == p) {
        throw CampaignError("pair '" + p.candidate + ":" + p.reference + "' is listed twice");
      }
    }
  }
}

}  // namespace heapscope::harness
