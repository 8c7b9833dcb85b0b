#include "harness/campaign/memory_sampler.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "harness/process/proc_status.h"

namespace heapscope::harness {
namespace {

double seconds_between(MemorySampler::Clock::time_point a, MemorySampler::Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

MemorySampler::MemorySampler(pid_t pid, int control_fd, std::vector<double> return_points)
    : pid_(pid), control_(control_fd), return_points_(std::move(return_points)) {
  std::sort(return_points_.begin(), return_points_.end());
  const std::string path = "/proc/" + std::to_string(pid_) + "/status";
  status_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (status_ < 0) problem_ = "cannot open " + path + ": " + std::strerror(errno);
}

MemorySampler::~MemorySampler() {
  if (status_ >= 0) ::close(status_);
}

bool MemorySampler::read_anon(std::uint64_t* bytes) {
  if (status_ < 0) return false;
  const auto start = Clock::now();
  char buf[4096];
  const ssize_t n = ::pread(status_, buf, sizeof buf - 1, 0);
  sampling_seconds_ += seconds_between(start, Clock::now());
  if (n <= 0) return false;
  buf[n] = '\0';
  // RssAnon of status (summed counters, unlike statm's; ~4 us a read against ~2).
  const std::optional<std::uint64_t> anon = proc_status_bytes(buf, "RssAnon");
  if (!anon) return false;
  *bytes = *anon;
  ++samples_;
  return true;
}

void MemorySampler::answer(const char* line) {
  const std::size_t n = std::strlen(line);
  if (::write(control_, line, n) != static_cast<ssize_t>(n) && problem_.empty())
    problem_ = std::string("cannot answer the child: ") + std::strerror(errno);
}

void MemorySampler::on_line(const std::string& line) {
  std::uint64_t anon = 0;
  if (line == "replay" && phase_ == Phase::kStarting) {
    replay_at_ = Clock::now();
    if (read_anon(&anon)) {
      baseline_ = peak_ = anon;
      timeline_.add(0, anon);
    }
    phase_ = Phase::kReplay;
    next_sample_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(kMemoryIntervalSeconds));
    answer("go\n");
  } else if (line == "drained" && phase_ == Phase::kReplay) {
    drained_at_ = Clock::now();
    if (read_anon(&anon)) {
      drained_ = anon;
      peak_ = std::max(peak_, anon);
      timeline_.close(seconds_between(replay_at_, drained_at_), anon);
    }
    phase_ = Phase::kReturn;
    wake(false);  // no return points: answer at once
  } else if (problem_.empty()) {
    problem_ = "unexpected control line '" + line.substr(0, 40) + "'";
  }
}

void MemorySampler::wake(bool control_readable) {
  if (control_readable && !closed_) {
    char buf[256];
    const ssize_t n = ::read(control_, buf, sizeof buf);
    if (n > 0) {
      pending_.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      closed_ = true;
    }
    for (std::size_t nl; (nl = pending_.find('\n')) != std::string::npos;) {
      const std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      on_line(line);
    }
  }
  const auto now = Clock::now();
  std::uint64_t anon = 0;
  if (phase_ == Phase::kReplay && now >= next_sample_) {
    if (read_anon(&anon)) {
      peak_ = std::max(peak_, anon);
      timeline_.add(seconds_between(replay_at_, now), anon);
    }
    next_sample_ = now + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(kMemoryIntervalSeconds));
  } else if (phase_ == Phase::kReturn) {
    while (returns_.size() < return_points_.size() &&
           seconds_between(drained_at_, now) >= return_points_[returns_.size()]) {
      const double at = seconds_between(drained_at_, Clock::now());
      if (!read_anon(&anon)) anon = 0;
      returns_.push_back({return_points_[returns_.size()], at, anon});
    }
    if (returns_.size() == return_points_.size()) {
      phase_ = Phase::kDone;
      answer("exit\n");
    }
  }
}

int MemorySampler::next_wake_ms() const {
  const auto now = Clock::now();
  Clock::time_point due;
  if (phase_ == Phase::kReplay) {
    due = next_sample_;
  } else if (phase_ == Phase::kReturn && returns_.size() < return_points_.size()) {
    due = drained_at_ + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(return_points_[returns_.size()]));
  } else {
    return -1;
  }
  if (due <= now) return 0;
  // Round up, so a wake never comes before the point is due.
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(due - now).count());
}

nlohmann::ordered_json MemorySampler::to_json() const {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const ReturnPoint& r : returns_)
    points.push_back({{"after_seconds", r.after}, {"at_seconds", r.at}, {"anon_bytes", r.anon}});
  nlohmann::ordered_json seconds = nlohmann::ordered_json::array();
  nlohmann::ordered_json bytes = nlohmann::ordered_json::array();
  for (const RssTimeline::Point& p : timeline_.points()) {
    // Microseconds are plenty at a 2 ms interval and keep the raw run short.
    seconds.push_back(std::round(p.seconds * 1e6) / 1e6);
    bytes.push_back(p.bytes);
  }
  nlohmann::ordered_json j{
      {"method", "proc-status-rssanon-v1"},
      {"interval_seconds", kMemoryIntervalSeconds},
      {"samples", samples_},
      {"baseline_anon_bytes", baseline_},
      {"peak_anon_bytes", peak_},
      {"peak_above_baseline_bytes", peak_ - std::min(peak_, baseline_)},
      {"drained_anon_bytes", drained_},
      {"drained_at_seconds",
       phase_ >= Phase::kReturn ? seconds_between(replay_at_, drained_at_) : 0.0},
      {"timeline", {{"stride", timeline_.stride()}, {"seconds", seconds}, {"anon_bytes", bytes}}},
      {"return_points", points},
      {"sampling_seconds", sampling_seconds_},
      {"complete", phase_ == Phase::kDone}};
  if (!problem_.empty()) j["problem"] = problem_;
  return j;
}

}  // namespace heapscope::harness
