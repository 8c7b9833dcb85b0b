// The summary and table of an application run (`hsbench app`): per allocator the median and
// IQR of wall, user and system seconds and of the process tree's peak RSS, and against the
// baseline (default glibc) the paired effect on wall time and on peak RSS with 95%
// whole-block bootstrap CIs (stats/paired_effect.h, 10,000 resamples).
//
// Direction: both effects are lower-is-better metrics, so effect = baseline / candidate per
// block (median of the per-block log ratios, exponentiated): > 1 means the candidate is faster
// (or uses less memory) than the baseline, < 1 slower (or more memory). The table says so in
// its header. Bootstrap seeds: bootstrap_seed(run seed, "<workload>/1/<metric>/<cand>/<base>").
//
// Same envelope as a campaign summary (report.h: "heapscope.campaign-summary" v1) with
// "metric": "wall_seconds", "direction": "lower-is-better" and an "application" section; per
// row: wall_seconds, user_seconds, system_seconds, peak_rss_tree_bytes (summaries),
// peak_rss_bytes {median}, output_differs, effect_vs_baseline (wall),
// rss_effect_vs_baseline (peak_rss_tree_bytes). Samples whose stdout differed (--same-output)
// are failures of kind output-differs and never enter the statistics.
#pragma once

#include <ostream>
#include <string>

#include "harness/campaign/raw_run.h"

namespace heapscope::harness {

// A raw run written by `hsbench app`.
bool is_app_run(const Json& raw);

// baseline: empty = the run's. Throws RawRunError when it has no samples in the run.
Json summarize_app_run(const Json& raw, const std::string& baseline);

void print_app_report(std::ostream& out, const Json& summary);

}  // namespace heapscope::harness
