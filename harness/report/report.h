// `hsbench report`: a raw run turned into per-cell statistics (harness/docs/protocol.md#statistics)
// — median ops/s with quartiles, n, peak RSS median, and for every allocator the paired effect
// against the baseline (exp of the median per-block log ratio, 95% whole-block bootstrap CI, MDE) —
// plus every failure. The summary JSON ("heapscope.campaign-summary", schema_version 1) is
// what the publishing step reads.
//
// Pairing: block b of a candidate is paired with block b of the baseline in the same cell
// when both succeeded. Bootstrap seeds: stats::bootstrap_seed(campaign seed,
// "<workload>/<threads>/ops_per_sec/<candidate>/<baseline>"), so the same raw run always gives
// a byte-identical summary. Within a block every allocator must have replayed the same stream;
// blocks whose stream digests disagree are listed under "digest_mismatches".
// Latency runs (harness/docs/protocol.md#latency) add a "latency" block per row: medians of the
// per-sample p50/p99/p99.9/max and paired, lower-is-better effects of p50, p99 and p99.9.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "harness/campaign/campaign_spec.h"
#include "harness/campaign/raw_run.h"
#include "harness/report/summary_model.h"

namespace heapscope::harness {

// An application run (`hsbench app`, a raw run with "application") is summarized by
// app_report.h instead: wall time as the metric, lower is better.
// baseline: empty = the run's baseline (mimalloc when present, else glibc). Throws
// RawRunError when the baseline is not in the run.
// pairs: comparisons besides the baseline's (harness/docs/protocol.md#pairs), summarized as
// "pairs"; empty = the run's campaign's. Throws RawRunError when a pair names an allocator the
// run does not have.
Json summarize_raw_run(const Json& raw, const std::string& baseline,
                       const std::vector<ComparisonPair>& pairs = {});

// Throws RawRunError when the summary lacks a field it prints or has it mistyped.
void print_report(std::ostream& out, const Json& summary);

}  // namespace heapscope::harness
