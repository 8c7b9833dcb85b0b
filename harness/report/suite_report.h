// The summary and table of a suite run (`hsbench suite`, harness/suite/suite_campaign.h).
//
// Per case (one summary cell each, workload = the case's name) and allocator: n, failures, the
// median and IQR of the case's metric (wall seconds, or the throughput parsed from its output),
// of wall time and of its peak RSS (the command's process tree, or the server's own peak), and
// against the case's baseline the paired effects on the metric and on peak RSS with 95%
// whole-block bootstrap CIs (stats/paired_effect.h). Effects always read > 1 = better than the
// baseline: faster (or more throughput when the case's metric is higher-is-better), less memory.
//
// The headline ("suite"."geomean"): per allocator, the geometric mean over the cases of those
// effects, with a CI from resampling blocks within each case (stats/geomean_effect.h). It takes
// only cases measured against the suite's baseline in which the allocator was measured; a case
// with its own baseline (redis: its Debian build links jemalloc) is reported but left out, and
// the summary lists the cases each mean took and the ones it left out, with the reason.
// Bootstrap seeds: bootstrap_seed(run seed, "<case>/1/<metric|rss_bytes>/<cand>/<base>") per
// case, "suite/geomean/<metric|rss_bytes>/<cand>/<base>" for the mean.
//
// Envelope: the campaign summary's ("heapscope.campaign-summary", report.h) with "metric":
// "suite" and a "suite" section: {name, input_seed, blocks, quick, geomean_method,
// cases: [{name, status, reason, baseline, in_geomean, metric, rss, note, problems, notes}],
// geomean: [{allocator, metric_effect, rss_effect, cases, left_out: [{case, reason}]}]}.
#pragma once

#include <ostream>
#include <string>

#include "harness/campaign/raw_run.h"

namespace heapscope::harness {

// A raw run written by `hsbench suite`.
bool is_suite_run(const Json& raw);

// baseline: empty = the run's. Throws RawRunError on a run it cannot read.
Json summarize_suite_run(const Json& raw, const std::string& baseline);

void print_suite_report(std::ostream& out, const Json& summary);

}  // namespace heapscope::harness
