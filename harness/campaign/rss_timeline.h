// RSS over time in bounded space: the memory protocol reads the child's RssAnon every 2 ms, so
// a 20-second replay gives 10,000 reads; the raw run keeps at most `capacity` + 3 points.
//
// The first reading (the pre-replay baseline) and the closing one (the drain) are kept as they
// are. The readings between are grouped into buckets of `stride` consecutive reads, and each
// bucket is kept as one point: its largest value at the time of that value. When the kept
// points reach the capacity, neighbours merge pairwise the same way and the stride doubles.
// So every point between is the maximum of an equal run of reads (the peak is always kept, at
// its own time), and there are between capacity/2 and capacity of them however long the replay.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace heapscope::harness {

class RssTimeline {
 public:
  struct Point {
    double seconds = 0;       // since the replay began
    std::uint64_t bytes = 0;  // RssAnon
  };

  explicit RssTimeline(std::size_t capacity = 64);

  // A reading; the first one is kept as it is.
  void add(double seconds, std::uint64_t bytes);
  // The closing reading, kept as it is after everything added before (the drain).
  void close(double seconds, std::uint64_t bytes) { last_ = Point{seconds, bytes}; }
  // In time order: the first reading, the kept points, the bucket still filling (if any), the
  // closing reading.
  std::vector<Point> points() const;
  // Reads per kept point between the first and the closing one (1, 2, 4, ...).
  std::size_t stride() const { return stride_; }

 private:
  void merge_pairs();

  std::size_t capacity_;
  std::size_t stride_ = 1;
  std::optional<Point> first_, last_;
  std::vector<Point> kept_;
  Point open_{};  // the maximum of the bucket being filled
  std::size_t open_reads_ = 0;
};

}  // namespace heapscope::harness
