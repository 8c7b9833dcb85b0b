// Running a campaign's samples: calibration for every cell, the block orders, then the
// samples block by block (block-major across cells, so slow drift hits every cell alike),
// skipping samples the raw run already holds (that is what makes --resume and run-block work).
//
// Progress and ETA go to stderr. The raw run is rewritten atomically after a sample whenever
// the time since the last write is at least 10x what that write took (so every sample for
// ordinary runs, and at most ~10% overhead for huge ones), and always at the end.
// SIGINT/SIGTERM: the child in flight is killed with its process group at once, its sample
// discarded, the file written, and the run stops.
#pragma once

#include <cstddef>
#include <string>

#include "harness/campaign/campaign_setup.h"

namespace heapscope::harness {

// Saves raw runs (nothing when path is empty), throttled as described above.
class RawRunWriter {
 public:
  explicit RawRunWriter(std::string path) : path_(std::move(path)) {}
  void maybe_save(const Json& raw);
  void save(const Json& raw);

 private:
  std::string path_;
  double last_cost_ = 0;  // seconds the last write took
  double last_end_ = 0;   // steady-clock seconds when it ended
};

// Calibrates every cell that has no calibration record yet. False when SIGINT/SIGTERM stopped
// it (the child in flight killed, what was calibrated saved).
[[nodiscard]] bool ensure_calibration(const ResolvedCampaign& campaign, Json& raw,
                                      RawRunWriter& writer);

// Adds the balanced orders of every (block, cell) not yet in raw["orders"].
void ensure_orders(const ResolvedCampaign& campaign, Json& raw);

struct ExecuteResult {
  std::size_t ran = 0;
  std::size_t failed = 0;
  bool interrupted = false;
};

// Runs every sample of raw["orders"] that raw["samples"] lacks.
ExecuteResult execute_samples(const ResolvedCampaign& campaign, Json& raw, RawRunWriter& writer);

}  // namespace heapscope::harness
