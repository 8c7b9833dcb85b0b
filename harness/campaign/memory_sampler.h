// The parent's half of the memory protocol (harness/docs/protocol.md#memory; the child's half
// is workloads/memory_handshake.h). The parent reads the child's RssAnon from
// /proc/<pid>/status every interval (statm's counters are not summed on Linux 6.2+): the child
// keeps its materialized streams and all its own tables in shared mappings (RssShmem), so what is
// left is the allocator's private memory plus a small constant (stacks, the child's data).
//
//   "replay" from the child   -> read the baseline, answer "go", start tracking the peak
//   "drained" from the child  -> read the drain point, then each return point (seconds after
//                                the drain), then answer "exit"
//
// MemorySampler is driven by the caller's poll loop: `wake()` whenever the control socket is
// readable or `next_wake_ms()` has passed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/campaign/rss_timeline.h"

namespace heapscope::harness {

inline constexpr double kMemoryIntervalSeconds = 0.002;

class MemorySampler {
 public:
  using Clock = std::chrono::steady_clock;

  // `control_fd` is the parent's end of the socket (not owned). Return points in seconds
  // after the drain, ascending.
  MemorySampler(pid_t pid, int control_fd, std::vector<double> return_points);
  ~MemorySampler();
  MemorySampler(const MemorySampler&) = delete;
  MemorySampler& operator=(const MemorySampler&) = delete;

  // Reads control lines (when `control_readable`), samples when due, answers the child.
  void wake(bool control_readable);
  // Milliseconds until the next sample is due (>= 0), or -1 when nothing more is due.
  int next_wake_ms() const;
  // The control socket reached EOF (the child exited or closed it).
  bool control_closed() const { return closed_; }
  // Every phase seen and every return point read.
  bool complete() const { return phase_ == Phase::kDone; }

  // {"method", "interval_seconds", "samples", "baseline_anon_bytes", "peak_anon_bytes",
  //  "peak_above_baseline_bytes", "drained_anon_bytes", "drained_at_seconds", "timeline":
  //  {"stride", "seconds", "anon_bytes"}, "return_points": [{"after_seconds", "at_seconds",
  //  "anon_bytes"}], "sampling_seconds", "complete", "problem"?}. Timeline and drain times are
  //  seconds since the replay began; return points' at_seconds since the drain.
  nlohmann::ordered_json to_json() const;

 private:
  enum class Phase { kStarting, kReplay, kReturn, kDone };
  bool read_anon(std::uint64_t* bytes);
  void on_line(const std::string& line);
  void answer(const char* line);

  pid_t pid_;
  int control_ = -1;
  int status_ = -1;
  std::vector<double> return_points_;
  Phase phase_ = Phase::kStarting;
  bool closed_ = false;
  std::string pending_;  // bytes of a control line not yet terminated
  std::string problem_;
  Clock::time_point next_sample_{};
  Clock::time_point replay_at_{};
  Clock::time_point drained_at_{};
  RssTimeline timeline_;
  std::uint64_t samples_ = 0;
  std::uint64_t baseline_ = 0, peak_ = 0, drained_ = 0;
  struct ReturnPoint {
    double after, at;
    std::uint64_t anon;
  };
  std::vector<ReturnPoint> returns_;
  double sampling_seconds_ = 0;  // time spent reading /proc
};

}  // namespace heapscope::harness
