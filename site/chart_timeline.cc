#include <algorithm>
#include <cmath>

#include "charts.h"
#include "number_format.h"
#include "svg.h"

namespace heapscope::site {

std::string timeline_chart(const TimelineChart& c) {
  const double left = 64, right = 24, top = 62, bottom = 58;
  const double plot_width = c.width - left - right, plot_height = c.height - top - bottom;
  // Three quarters of the width for the replay, the rest for the return points.
  const std::size_t slots = c.return_labels.size();
  const double replay_width = slots == 0 ? plot_width : plot_width * 0.75;
  const double drain_x = left + replay_width;
  auto x_of_share = [&](double share) { return left + std::clamp(share, 0.0, 1.0) * replay_width; };
  auto x_of_slot = [&](std::size_t i) {
    return drain_x + (plot_width - replay_width) * (static_cast<double>(i) + 0.5) /
                         static_cast<double>(std::max<std::size_t>(slots, 1));
  };
  Svg svg(c.width, c.height, c.id, c.title, c.desc);

  double hi = 0;
  for (const TimelineSeries& s : c.series) {
    for (const auto& [share, bytes] : s.replay) hi = std::max(hi, bytes);
    for (const auto& [slot, bytes] : s.returns) hi = std::max(hi, bytes);
  }
  hi = hi > 0 ? hi * 1.1 : 1048576.0;
  const Scale y{0, hi, top + plot_height, top, false};

  for (double t : linear_ticks(0, hi / 1048576.0, 4)) {
    svg.line(left, y(t * 1048576.0), left + plot_width, y(t * 1048576.0), "#e3e3e3", "grid");
    svg.text(left - 6, y(t * 1048576.0) + 4, fixed(t, t < 10 && t != std::floor(t) ? 1 : 0), "end",
             "tick");
  }
  svg.line(left, top, left, top + plot_height, "#444", "axis");
  svg.line(left, top + plot_height, left + plot_width, top + plot_height, "#444", "axis");
  // With return points the drain line marks 100%, and its label would collide with theirs.
  for (int pct = 0; pct <= (slots > 0 ? 75 : 100); pct += 25) {
    svg.text(x_of_share(pct / 100.0), top + plot_height + 16, std::to_string(pct) + "%", "middle",
             "tick");
  }
  if (slots > 0) {
    svg.line(drain_x, top, drain_x, top + plot_height, kBaselineColor, "reference", 1.2, true);
    svg.text(drain_x + 4, top + 12, "drained", "start", "note");
    for (std::size_t i = 0; i < slots; ++i) {
      svg.text(x_of_slot(i), top + plot_height + 16, c.return_labels[i], "middle", "tick");
    }
  }
  svg.text(left + replay_width / 2, c.height - 10, "share of the allocator's replay time", "middle",
           "axis-label");
  if (slots > 0) {
    svg.text(drain_x + (plot_width - replay_width) / 2, c.height - 10, "after the drain", "middle",
             "axis-label");
  }
  svg.text(14, top + plot_height / 2, "RssAnon MiB", "middle", "axis-label", -90);
  svg.text(8, 16, c.title, "start", "chart-title");

  std::vector<std::pair<std::string, std::string>> legend;
  for (const TimelineSeries& s : c.series) legend.emplace_back(s.name, s.color);
  svg.legend(left, 26, legend);

  for (const TimelineSeries& s : c.series) {
    if (s.replay.empty()) continue;
    std::vector<std::pair<double, double>> line;
    for (const auto& [share, bytes] : s.replay) line.emplace_back(x_of_share(share), y(bytes));
    svg.polyline(line, s.color, "series-line");
    const auto peak =
        std::max_element(s.replay.begin(), s.replay.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    const std::string replay = fixed(s.replay_seconds, s.replay_seconds < 10 ? 2 : 1) + " s";
    svg.circle(x_of_share(peak->first), y(peak->second), 3.2, s.color, "mark",
               s.name + ": peak " + mib(peak->second) + " MiB at " + fixed(peak->first * 100, 0) +
                   "% of its " + replay + " replay");
    const auto& drained = s.replay.back();
    svg.circle(x_of_share(drained.first), y(drained.second), 3.2, s.color, "mark",
               s.name + ": " + mib(drained.second) + " MiB when drained (after " + replay + ")");
    // After the drain: dashed from the drain reading through each return point.
    std::vector<std::pair<double, double>> after{{x_of_share(drained.first), y(drained.second)}};
    for (const auto& [slot, bytes] : s.returns) {
      if (slot >= slots) continue;
      after.emplace_back(x_of_slot(slot), y(bytes));
      svg.circle(
          x_of_slot(slot), y(bytes), 3.2, s.color, "mark",
          s.name + ": " + mib(bytes) + " MiB at " + c.return_labels[slot] + " after the drain");
    }
    if (after.size() > 1) {
      for (std::size_t i = 1; i < after.size(); ++i) {
        svg.line(after[i - 1].first, after[i - 1].second, after[i].first, after[i].second, s.color,
                 "series-after", 1.2, true);
      }
    }
  }
  return svg.str();
}

}  // namespace heapscope::site
