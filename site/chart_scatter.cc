#include <algorithm>
#include <cmath>

#include "charts.h"
#include "number_format.h"
#include "svg.h"

namespace heapscope::site {

std::string scatter_chart(const ScatterChart& c) {
  const double left = 64, right = 24, top = 52, bottom = 56;
  const double plot_width = c.width - left - right, plot_height = c.height - top - bottom;
  Svg svg(c.width, c.height, c.id, c.title, c.desc);

  // Both ranges include 1.0 (the baseline) with a margin, so its lines are always inside.
  double x_lo = 1 / 1.1, x_hi = 1.1, y_lo = 1 / 1.1, y_hi = 1.1;
  for (const ScatterPoint& p : c.points) {
    if (!(p.x > 0 && p.y > 0) || !std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    x_lo = std::min(x_lo, p.x);
    x_hi = std::max(x_hi, p.x);
    y_lo = std::min(y_lo, p.y);
    y_hi = std::max(y_hi, p.y);
  }
  const Scale x{x_lo / 1.08, x_hi * 1.08, left, left + plot_width, true};
  const Scale y{y_lo / 1.08, y_hi * 1.08, top + plot_height, top, true};

  // The winning quadrant: less memory (x < 1) and faster (y > 1).
  svg.rect(left, top, x(1) - left, y(1) - top, "#e6f2ea", "shade");
  for (double t : ratio_ticks(y)) {
    svg.line(left, y(t), left + plot_width, y(t), "#e3e3e3", "grid");
    svg.text(left - 6, y(t) + 4, ratio_tick(t), "end", "tick");
  }
  for (double t : ratio_ticks(x, 28)) {
    svg.line(x(t), top, x(t), top + plot_height, "#e3e3e3", "grid");
    svg.text(x(t), top + plot_height + 16, ratio_tick(t), "middle", "tick");
  }
  svg.line(left, y(1), left + plot_width, y(1), kBaselineColor, "reference", 1.2, true);
  svg.line(x(1), top, x(1), top + plot_height, kBaselineColor, "reference", 1.2, true);
  svg.line(left, top, left, top + plot_height, "#444", "axis");
  svg.line(left, top + plot_height, left + plot_width, top + plot_height, "#444", "axis");
  svg.text(left + plot_width / 2, c.height - 12, c.x_label, "middle", "axis-label");
  svg.text(14, top + plot_height / 2, c.y_label, "middle", "axis-label", -90);
  svg.text(8, 16, c.title, "start", "chart-title");
  svg.text(left + 4, top + 12, c.better, "start", "note");

  for (const ScatterPoint& p : c.points) {
    if (!(p.x > 0 && p.y > 0) || !std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    const double px = x(p.x), py = y(p.y);
    svg.circle(px, py, 4.5, p.color, "mark", p.tooltip);
    // Labels on the side with more room.
    const bool right_side = px < left + plot_width * 0.7;
    svg.text(px + (right_side ? 7 : -7), py - 6, p.label, right_side ? "start" : "end", "legend");
  }
  return svg.str();
}

}  // namespace heapscope::site
