// Calibration (harness/docs/protocol.md#campaigns): per cell, on the baseline allocator, find the
// op count for which one sample's timed region lasts target_seconds [min, max]; the count is then
// frozen for every allocator of the cell and recorded with all its attempts.
//
// Attempt k runs `ops` with block id kCalibrationBlock + k (never a measured block's stream).
// Accept when min <= seconds <= max; else ops *= mid / seconds (mid = (min+max)/2), the
// factor clamped to [1/16, 16]; at most kCalibrationAttempts. A child failure stops the cell
// ("failed"); running out of attempts keeps the last estimate ("unconverged").
// A campaign with a fixed op count records {"status": "fixed"} and runs nothing.
// Latency campaigns (harness/docs/protocol.md#latency) calibrate with the per-op timing on,
// unthrottled, and record "latency_capacity_ops_per_sec" (stream ops / s) and the cell's
// frozen schedule rate "latency_rate_ops_per_sec"; with a fixed op count and no fixed rate,
// one unthrottled baseline run measures the capacity.
#pragma once

#include <cstdint>

#include "harness/campaign/campaign_setup.h"

namespace heapscope::harness {

inline constexpr std::uint64_t kCalibrationBlock = std::uint64_t{1} << 62;
inline constexpr int kCalibrationAttempts = 12;

// {"workload","threads","allocator","status","ops","seconds","attempts":[...]}
Json calibrate_cell(const ResolvedCampaign& campaign, const std::string& workload,
                    unsigned threads);

// The calibration record of a cell in raw["calibration"], or nullptr.
const Json* find_calibration(const Json& raw, const std::string& workload, unsigned threads);

}  // namespace heapscope::harness
