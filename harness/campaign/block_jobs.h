// Blocks as independent jobs (harness/docs/protocol.md#campaigns, "beyond one machine"). Pairing
// lives inside a block, so a campaign splits into one job per block that any scheduler (GNU
// parallel, a Slurm array, a Kubernetes indexed Job) can run on identical hosts.
//
//   plan:      calibrate every cell once, draw the orders, write one job file per block.
//              A job file is a raw run with no samples, the orders of its block only, and
//              "job": {"block", "blocks", "campaign"}.
//   run-block: runs the job's samples on this host; the result is a raw run of that block.
//   merge:     checks the results share campaign, seed and calibration, and joins them
//              into one raw run of the same form `hsbench run` writes.
#pragma once

#include <string>
#include <vector>

#include "harness/campaign/raw_run.h"

namespace heapscope::harness {

// The job of block `block` cut from a planned raw run (calibration + all orders).
Json block_job(const Json& planned, unsigned block);

// Joins results; throws RawRunError naming the file that does not fit.
Json merge_results(const std::vector<Json>& results, const std::vector<std::string>& names);

}  // namespace heapscope::harness
