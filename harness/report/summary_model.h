// The summary model both reports are built on (report.h for campaigns, app_report.h for
// applications): a summary is the envelope, then per cell the allocators in report order
// (baseline first, then by id), each with statistics of its successful samples and the paired
// effect against the baseline over the blocks both completed, then the failures and the
// unavailable allocators. The two reports differ only in their metrics and their tables; the
// steps and the JSON forms below are shared so the summaries cannot drift apart.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "harness/campaign/raw_run.h"
#include "stats/paired_effect.h"

namespace heapscope::stats {
struct Summary;
}  // namespace heapscope::stats

namespace heapscope::harness {

inline constexpr const char* kSummarySchema = "heapscope.campaign-summary";
inline constexpr int kSummarySchemaVersion = 2;

// The baseline a summary compares against: the override, else the run's (glibc when unset).
std::string summary_baseline(const Json& raw, const std::string& baseline_override);

// Throws RawRunError when a run with samples has none of the baseline.
void require_baseline_samples(const Json& raw, const std::string& baseline, bool seen);

// {"id", "kind", "reason"} of a failed sample, for the summary's "failures".
Json failure_entry(const Json& sample);

// Report order: the baseline first (when present), then the other ids in the order given.
std::vector<std::string> baseline_first(const std::string& baseline,
                                        const std::vector<std::string>& sorted_ids);

// One successful sample's value of a metric, with the block it belongs to.
struct BlockValue {
  std::uint64_t block;
  double value;
};

// The paired effect of `candidate` against `baseline` over the blocks both have, as JSON;
// its bootstrap seed is stats::bootstrap_seed(run seed, key).
Json block_paired_effect(const std::vector<BlockValue>& candidate,
                         const std::vector<BlockValue>& baseline, stats::Direction direction,
                         std::uint64_t run_seed, const std::string& key);

// JSON forms shared by every summary.
Json number_or_null(double v);
Json summary_to_json(const stats::Summary& s);
Json paired_effect_to_json(const stats::PairedEffect& e);
// The fields every summary starts with, in this order: schema, schema_version, campaign, seed,
// baseline, the members of `metric` ("metric" and what describes it), the effect, MDE and
// bootstrap-seed methods, resamples, confidence, and the raw run's complete and hosts.
Json summary_envelope(const Json& raw, const std::string& campaign, std::uint64_t seed,
                      const std::string& baseline, const Json& metric);
// [{"id", "reason"}] of the raw run's allocators that were not available.
Json unavailable_allocators_json(const Json& raw);
// The fields every summary ends with: samples {total, ok, failed}, cells, failures and
// unavailable_allocators.
void finish_summary(Json& summary, const Json& raw, Json cells, Json failures);

// Text pieces shared by both tables.
// `v * scale` with `digits` decimals, or "-" when v is not a number.
std::string fixed_number(const Json& v, int digits, double scale = 1);
// "1.234 [1.100, 1.300] *" (the star when the CI excludes 1), "1.234" without a valid CI, or
// "(baseline)" for null.
std::string effect_text(const Json& effect);
// "n", or "n+kF" when k samples failed.
std::string sample_count_text(const Json& row);
// The closing lines of every report table: "unavailable: ID: REASON" per unavailable
// allocator, then "failed: ID: KIND: REASON" per failed sample.
void print_unavailable_and_failed(std::ostream& out, const Json& summary);

}  // namespace heapscope::harness
