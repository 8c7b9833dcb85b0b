// The two chart kinds the pages use, drawn with svg.h:
//  - ratio_chart (chart_ratio.cc): grouped bars of a ratio to the baseline on a log axis
//    centred on 1.0, with CI whiskers (throughput effects, peak RSS ratios);
//  - line_chart (chart_line.cc): one line per series over ordered x positions, with an
//    optional shaded region (thread scaling with oversubscribed points, history of headline
//    numbers across runs);
//  - timeline_chart (chart_timeline.cc): memory over a replay and after its drain;
//  - scatter_chart (chart_scatter.cc): points on two ratio axes (speed against memory).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace heapscope::site {

struct RatioBar {
  std::size_t series = 0;  // index into RatioChart::series
  double value = 0;        // NaN: nothing drawn (no data), listed in the tooltip of the group
  std::optional<std::pair<double, double>> ci;
  std::string tooltip;
};

struct RatioGroup {
  std::string label;
  std::vector<RatioBar> bars;
};

struct RatioChart {
  std::string id, title, desc;
  std::string y_label;   // e.g. "throughput / baseline (log scale)"
  std::string better;    // e.g. "higher = faster than mimalloc"
  std::string baseline;  // drawn as the 1.0 line's label
  std::vector<std::string> series;
  std::vector<std::string> colors;
  std::vector<RatioGroup> groups;
};

std::string ratio_chart(const RatioChart& chart);

struct LinePoint {
  std::size_t x = 0;  // index into LineChart::x_labels
  double y = 0;
  std::string tooltip;
};

struct LineSeries {
  std::string name, color;
  std::vector<LinePoint> points;
};

struct LineChart {
  std::string id, title, desc;
  std::string x_label, y_label;
  std::vector<std::string> x_labels;  // evenly spaced positions
  std::vector<LineSeries> series;
  bool ratio_axis = false;                // log axis around 1.0 (else linear from 0)
  std::optional<std::size_t> shade_from;  // shade x positions >= this index
  std::string shade_label;
  double width = 440, height = 290;
};

std::string line_chart(const LineChart& chart);

// One allocator's memory curve: over its replay, x is the share of that allocator's replay
// time (0 = the replay began, 1 = drained), so allocators that replay the same stream at
// different speeds line up by progress; after the drain, one value per return point.
struct TimelineSeries {
  std::string name, color;
  std::vector<std::pair<double, double>> replay;        // (share of the replay, bytes)
  std::vector<std::pair<std::size_t, double>> returns;  // (index into return_labels, bytes)
  double replay_seconds = 0;
};

struct TimelineChart {
  std::string id, title, desc;
  std::vector<std::string> return_labels;  // e.g. "+0.1 s", "+1 s", "+5 s"
  std::vector<TimelineSeries> series;
  double width = 520, height = 320;
};

// RssAnon in MiB from 0 against the replay's progress, a dashed "drained" line, then the
// return points at evenly spaced slots; marks at each series' peak, drain and return points.
std::string timeline_chart(const TimelineChart& chart);

struct ScatterPoint {
  std::string label, color, tooltip;
  double x = 0, y = 0;  // ratios to the baseline, > 0
};

struct ScatterChart {
  std::string id, title, desc;
  std::string x_label, y_label;
  std::string better;  // the corner that wins, e.g. "upper left = faster and smaller"
  std::vector<ScatterPoint> points;
  double width = 480, height = 360;
};

// Both axes log ratio scales through 1.0 (reference lines at 1.0), each point labelled.
std::string scatter_chart(const ScatterChart& chart);

}  // namespace heapscope::site
