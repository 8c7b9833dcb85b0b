// Campaign files from users: every malformed one ends in a CampaignError naming the problem.
#include "harness/campaign/campaign_spec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace heapscope::harness {
namespace {

using Json = nlohmann::ordered_json;

// The message of the CampaignError `load` throws, or "" (a test failure) when it throws none.
template <class Load>
std::string refusal(Load load) {
  try {
    load();
  } catch (const CampaignError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

Json minimal() { return Json{{"workloads", {"tiny-hot"}}}; }

TEST(CampaignSpec, ReadsWholeNumbers) {
  Json j = minimal();
  j["blocks"] = 7;
  j["threads"] = {1, 4};
  j["seed"] = 18446744073709551615u;
  j["ops"] = 1000;
  const CampaignSpec spec = campaign_from_json(j);
  EXPECT_EQ(spec.blocks, 7u);
  EXPECT_EQ(spec.threads, (std::vector<unsigned>{1, 4}));
  EXPECT_EQ(*spec.seed, 18446744073709551615u);
  EXPECT_EQ(spec.fixed_ops, 1000u);
}

// Seen while writing fuzz/harness_reader_fuzz: get<unsigned>() of 1e300 is undefined behaviour
// (UBSan: "outside the range of representable values"), and -1 silently became 4294967295 blocks.
TEST(CampaignSpec, RefusesNumbersThatDoNotFit) {
  for (const char* key : {"blocks", "seed", "ops", "calibration_start_ops"}) {
    for (const Json& bad : {Json(1e300), Json(-1), Json(2.5), Json("3")}) {
      Json j = minimal();
      j[key] = bad;
      const std::string why = refusal([&] { campaign_from_json(j); });
      EXPECT_NE(why.find(key), std::string::npos) << key << " = " << bad.dump() << ": " << why;
    }
  }
  Json j = minimal();
  j["blocks"] = 4294967296u;  // one past unsigned
  EXPECT_NE(refusal([&] { campaign_from_json(j); }).find("from 0 to 4294967295"),
            std::string::npos);
  j = minimal();
  j["threads"] = {1, 1e300};
  EXPECT_NE(refusal([&] { campaign_from_json(j); }).find("thread point"), std::string::npos);
  j["threads"] = 2;
  EXPECT_NE(refusal([&] { campaign_from_json(j); }).find("not a list"), std::string::npos);
}

TEST(CampaignSpec, RefusesDeeplyNestedFiles) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("hs-deep-campaign-" + std::to_string(getpid()) + ".json"))
                               .string();
  std::ofstream(path) << "{\"workloads\": " << std::string(100000, '[') << std::string(100000, ']')
                      << "}";
  EXPECT_NE(refusal([&] { load_campaign(path); }).find("nested deeper than 256 levels"),
            std::string::npos);
  std::filesystem::remove(path);
}

// The main job's two campaigns: throughput and memory in `quick`, latency (paced samples) in
// `quick-latency`, on cells quick also has; headline's thread points reach 16.
TEST(CampaignSpec, MainJobCampaignsSplitThroughputAndLatency) {
  const CampaignSpec quick = load_campaign("quick");
  const CampaignSpec latency = load_campaign("quick-latency");
  EXPECT_FALSE(quick.latency);
  EXPECT_TRUE(latency.latency);
  EXPECT_EQ(latency.latency_load, 0.5);
  for (const std::string& w : latency.workloads) {
    EXPECT_NE(std::find(quick.workloads.begin(), quick.workloads.end(), w), quick.workloads.end())
        << w;
  }
  EXPECT_EQ(campaign_from_json(campaign_to_json(latency)).latency, true);
  EXPECT_EQ(load_campaign("headline").threads, (std::vector<unsigned>{1, 2, 4, 8, 16}));
  EXPECT_NE(refusal([] { load_campaign("no-such-campaign"); }).find("quick-latency"),
            std::string::npos);
}

// Pairs (protocol.md#pairs): the tax campaign's four, a round trip through JSON, and every
// malformed pair refused with what is wrong.
TEST(CampaignSpec, PairsRoundTripAndTaxHasTheProfilersFour) {
  const CampaignSpec tax = load_campaign("tax");
  ASSERT_EQ(tax.pairs.size(), 4u);
  EXPECT_EQ(tax.pairs[0], (ComparisonPair{"engine", "engine-noprof"}));
  EXPECT_EQ(tax.pairs[1], (ComparisonPair{"engine-prof", "engine"}));
  for (const ComparisonPair& p : tax.pairs) {
    EXPECT_NE(std::find(tax.allocators.begin(), tax.allocators.end(), p.candidate),
              tax.allocators.end())
        << p.candidate;
    EXPECT_NE(std::find(tax.allocators.begin(), tax.allocators.end(), p.reference),
              tax.allocators.end())
        << p.reference;
  }
  const CampaignSpec again = campaign_from_json(campaign_to_json(tax));
  EXPECT_EQ(again.pairs, tax.pairs);
  // Campaigns without pairs write no field, so their JSON (and resumed runs) are as before.
  EXPECT_FALSE(campaign_to_json(load_campaign("quick")).contains("pairs"));

  EXPECT_EQ(parse_pair("engine-prof:engine"), (ComparisonPair{"engine-prof", "engine"}));
  for (const char* bad : {"engine", ":engine", "engine:", "a:b:c", ""}) {
    EXPECT_NE(refusal([&] { parse_pair(bad); }).find("CANDIDATE:REFERENCE"), std::string::npos)
        << bad;
  }
  const auto with_pairs = [](Json pairs) {
    Json j = minimal();
    j["pairs"] = std::move(pairs);
    return j;
  };
  EXPECT_NE(refusal([&] {
              campaign_from_json(with_pairs(Json::array({Json::array({"a", "a"})})));
            }).find("two different"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              campaign_from_json(
                  with_pairs(Json::array({Json::array({"a", "b"}), Json::array({"a", "b"})})));
            }).find("listed twice"),
            std::string::npos);
  for (const Json& bad : {Json("a:b"), Json::array({Json::array({"a"})}),
                          Json::array({Json::array({"a", 1})}), Json::array({"a", "b"})}) {
    EXPECT_NE(refusal([&] { campaign_from_json(with_pairs(bad)); }).find("pair"), std::string::npos)
        << bad.dump();
  }
}

}  // namespace
}  // namespace heapscope::harness
