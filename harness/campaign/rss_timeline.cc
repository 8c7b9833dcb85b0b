#include "harness/campaign/rss_timeline.h"

#include <algorithm>

namespace heapscope::harness {

// An even capacity, so a merge leaves every point covering the same number of reads.
RssTimeline::RssTimeline(std::size_t capacity)
    : capacity_(std::max<std::size_t>(capacity, 2) & ~std::size_t{1}) {
  kept_.reserve(capacity_);
}

void RssTimeline::add(double seconds, std::uint64_t bytes) {
  if (!first_) {
    first_ = Point{seconds, bytes};
    return;
  }
  // The later read wins a tie, here and in merge_pairs, so a flat stretch keeps its end.
  if (open_reads_ == 0 || bytes >= open_.bytes) open_ = {seconds, bytes};
  if (++open_reads_ < stride_) return;
  kept_.push_back(open_);
  open_reads_ = 0;
  if (kept_.size() == capacity_) merge_pairs();
}

void RssTimeline::merge_pairs() {
  std::size_t out = 0;
  for (std::size_t i = 0; i + 1 < kept_.size(); i += 2) {
    kept_[out++] = kept_[i].bytes > kept_[i + 1].bytes ? kept_[i] : kept_[i + 1];
  }
  if (kept_.size() % 2 == 1) kept_[out++] = kept_.back();
  kept_.resize(out);
  stride_ *= 2;
}

std::vector<RssTimeline::Point> RssTimeline::points() const {
  std::vector<Point> out;
  if (first_) out.push_back(*first_);
  out.insert(out.end(), kept_.begin(), kept_.end());
  if (open_reads_ > 0) out.push_back(open_);
  if (last_) out.push_back(*last_);
  return out;
}

}  // namespace heapscope::harness
