#include <algorithm>
#include <cmath>

#include "charts.h"
#include "number_format.h"
#include "svg.h"

namespace heapscope::site {

std::string line_chart(const LineChart& c) {
  const double left = 64, right = 40, top = 58, bottom = 62;  // right: room for the last label
  const double plot_width = c.width - left - right, plot_height = c.height - top - bottom;
  Svg svg(c.width, c.height, c.id, c.title, c.desc);

  double lo = c.ratio_axis ? 1 / 1.1 : 0, hi = c.ratio_axis ? 1.1 : 0;
  for (const LineSeries& s : c.series) {
    for (const LinePoint& p : s.points) {
      if (!std::isfinite(p.y) || (c.ratio_axis && p.y <= 0)) continue;
      lo = std::min(lo, p.y);
      hi = std::max(hi, p.y);
    }
  }
  if (c.ratio_axis) {
    lo /= 1.05;
    hi *= 1.05;
  } else {
    hi = hi > 0 ? hi * 1.1 : 1;
  }
  const std::size_t n = std::max<std::size_t>(c.x_labels.size(), 1);
  auto x_of = [&](std::size_t i) {
    return n == 1 ? left + plot_width / 2
                  : left + 16 +
                        static_cast<double>(i) * (plot_width - 32) / static_cast<double>(n - 1);
  };
  const Scale y{lo, hi, top + plot_height, top, c.ratio_axis};

  if (c.shade_from && *c.shade_from < n) {
    const double from =
        *c.shade_from == 0 ? left : (x_of(*c.shade_from - 1) + x_of(*c.shade_from)) / 2;
    svg.rect(from, top, left + plot_width - from, plot_height, "#f4e3c3", "shade");
    svg.text(left + plot_width - 4, top + 12, c.shade_label, "end", "note");
  }
  const auto ticks = c.ratio_axis ? ratio_ticks(y) : linear_ticks(lo, hi, 4);
  for (double t : ticks) {
    svg.line(left, y(t), left + plot_width, y(t), "#e3e3e3", "grid");
    svg.text(left - 6, y(t) + 4, c.ratio_axis ? ratio_tick(t) : rate_si(t), "end", "tick");
  }
  if (c.ratio_axis)
    svg.line(left, y(1), left + plot_width, y(1), kBaselineColor, "reference", 1.5, true);
  svg.line(left, top, left, top + plot_height, "#444", "axis");
  svg.line(left, top + plot_height, left + plot_width, top + plot_height, "#444", "axis");
  for (std::size_t i = 0; i < c.x_labels.size(); ++i) {
    svg.text(x_of(i), top + plot_height + 16, c.x_labels[i], "middle", "tick");
  }
  svg.text(left + plot_width / 2, c.height - 10, c.x_label, "middle", "axis-label");
  svg.text(14, top + plot_height / 2, c.y_label, "middle", "axis-label", -90);

  svg.text(8, 16, c.title, "start", "chart-title");
  std::vector<std::pair<std::string, std::string>> legend;
  for (const LineSeries& s : c.series) legend.emplace_back(s.name, s.color);
  svg.legend(left, 26, legend);
  for (const LineSeries& s : c.series) {
    std::vector<std::pair<double, double>> points;
    std::vector<const LinePoint*> drawn;
    for (const LinePoint& p : s.points) {
      if (!std::isfinite(p.y) || (c.ratio_axis && p.y <= 0)) continue;
      points.emplace_back(x_of(p.x), y(p.y));
      drawn.push_back(&p);
    }
    svg.polyline(points, s.color, "series-line");
    for (std::size_t i = 0; i < points.size(); ++i) {
      svg.circle(points[i].first, points[i].second, 3.2, s.color, "mark", drawn[i]->tooltip);
    }
  }
  return svg.str();
}

}  // namespace heapscope::site
