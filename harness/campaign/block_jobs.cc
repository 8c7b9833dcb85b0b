#include "harness/campaign/block_jobs.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace heapscope::harness {

Json block_job(const Json& planned, unsigned block) {
  Json job = planned;
  Json orders = Json::array();
  for (const Json& o : planned["orders"]) {
    if (o["block"] == block) orders.push_back(o);
  }
  job["orders"] = orders;
  job["samples"] = Json::array();
  job["job"] = {{"block", block},
                {"blocks", planned["campaign"]["blocks"]},
                {"campaign", planned["campaign"]["name"]}};
  return job;
}

Json merge_results(const std::vector<Json>& results, const std::vector<std::string>& names) {
  if (results.empty()) throw RawRunError("nothing to merge");
  Json merged = results.front();
  merged.erase("job");
  merged["orders"] = Json::array();
  merged["samples"] = Json::array();
  merged["hosts"] = Json::array();
  std::set<std::string> hostnames;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Json& r = results[i];
    for (const char* key : {"campaign", "seed", "calibration", "baseline", "workload_program"}) {
      if (r[key] != results.front()[key]) {
        throw RawRunError(names[i] + ": \"" + key + "\" differs from " + names.front() +
                          "; results of different plans cannot be merged");
      }
    }
    for (const Json& a : r["allocators"]) {
      for (const Json& b : results.front()["allocators"]) {
        if (a["id"] == b["id"] && a["sha256"] != b["sha256"]) {
          throw RawRunError(names[i] + ": allocator " + a["id"].get<std::string>() +
                            " has a different library (sha256) than in " + names.front());
        }
      }
    }
    for (const Json& h : r["hosts"]) {
      const std::string name = h.contains("hostname") ? h["hostname"].dump() : "";
      if (hostnames.insert(name).second) merged["hosts"].push_back(h);
    }
    for (const Json& o : r["orders"]) merged["orders"].push_back(o);
    for (const Json& s : r["samples"]) {
      if (!ids.insert(s["id"].get<std::string>()).second) {
        throw RawRunError(names[i] + ": sample " + s["id"].get<std::string>() +
                          " is already in another result (the same block twice?)");
      }
      merged["samples"].push_back(s);
    }
  }
  // Block-major, cells in campaign order, as `hsbench run` writes them.
  const Json& campaign = merged["campaign"];
  std::map<std::string, std::size_t> workload_rank;
  std::map<unsigned, std::size_t> thread_rank;
  for (const Json& w : campaign["workloads"]) {
    workload_rank.emplace(w.get<std::string>(), workload_rank.size());
  }
  for (const Json& t : campaign["threads"])
    thread_rank.emplace(t.get<unsigned>(), thread_rank.size());
  auto cell_rank = [&](const Json& x) {
    return std::make_tuple(x["block"].get<std::uint64_t>(),
                           workload_rank[x["workload"].get<std::string>()],
                           thread_rank[x["threads"].get<unsigned>()],
                           x.contains("position") ? x["position"].get<std::uint64_t>() : 0);
  };
  auto by_rank = [&](const Json& a, const Json& b) { return cell_rank(a) < cell_rank(b); };
  std::stable_sort(merged["orders"].begin(), merged["orders"].end(), by_rank);
  std::stable_sort(merged["samples"].begin(), merged["samples"].end(), by_rank);
  std::size_t expected = 0;
  for (const Json& o : merged["orders"]) expected += o["order"].size();
  const std::size_t planned_orders = campaign["workloads"].size() * campaign["threads"].size() *
                                     campaign["blocks"].get<std::size_t>();
  merged["complete"] =
      merged["orders"].size() == planned_orders && merged["samples"].size() == expected;
  merged["merged_from"] = results.size();
  return merged;
}

}  // namespace heapscope::harness
