#include <algorithm>
#include <cmath>

#include "charts.h"
#include "number_format.h"
#include "svg.h"

namespace heapscope::site {

std::string ratio_chart(const RatioChart& c) {
  // Layout: left axis, groups of bars, legend row at the top.
  const double left = 62, right = 16, top = 70, bottom = 92, bar = 9, gap = 16;
  std::size_t per_group = 1;
  for (const RatioGroup& g : c.groups) per_group = std::max(per_group, g.bars.size());
  const double group_width = static_cast<double>(per_group) * bar + gap;
  double legend_width = 0;
  for (const std::string& name : c.series)
    legend_width += 24 + 7 * static_cast<double>(name.size());
  const double plot_width =
      std::max({360.0, legend_width, 7.5 * static_cast<double>(c.title.size()),
                static_cast<double>(c.groups.size()) * group_width});
  const double plot_height = 230;
  Svg svg(left + plot_width + right, top + plot_height + bottom, c.id, c.title, c.desc);

  double lo = 1 / 1.1, hi = 1.1;
  for (const RatioGroup& g : c.groups) {
    for (const RatioBar& b : g.bars) {
      if (!(b.value > 0) || !std::isfinite(b.value)) continue;
      lo = std::min(lo, b.value);
      hi = std::max(hi, b.value);
      if (b.ci && b.ci->first > 0 && std::isfinite(b.ci->second)) {
        lo = std::min(lo, b.ci->first);
        hi = std::max(hi, b.ci->second);
      }
    }
  }
  lo /= 1.05;
  hi *= 1.05;
  const Scale y{lo, hi, top + plot_height, top, true};

  // Axis, grid and the 1.0 reference line.
  for (double t : ratio_ticks(y)) {
    svg.line(left, y(t), left + plot_width, y(t), "#e3e3e3", "grid");
    svg.text(left - 6, y(t) + 4, ratio_tick(t), "end", "tick");
  }
  svg.line(left, top, left, top + plot_height, "#444", "axis");
  svg.line(left, y(1), left + plot_width, y(1), kBaselineColor, "reference", 1.5, true);
  svg.text(left + plot_width, y(1) - 4, c.baseline + " = 1.0", "end", "note");
  svg.text(16, top + plot_height / 2, c.y_label, "middle", "axis-label", -90);
  svg.text(8, 18, c.title, "start", "chart-title");
  svg.text(left, top - 30, c.better, "start", "note");

  // Legend.
  double lx = left;
  for (std::size_t s = 0; s < c.series.size(); ++s) {
    svg.rect(lx, top - 20, 10, 10, c.colors[s], "legend-swatch");
    svg.text(lx + 14, top - 11, c.series[s], "start", "legend");
    lx += 24 + 7 * static_cast<double>(c.series[s].size());
  }

  for (std::size_t g = 0; g < c.groups.size(); ++g) {
    const double gx = left + gap / 2 + static_cast<double>(g) * group_width;
    for (std::size_t i = 0; i < c.groups[g].bars.size(); ++i) {
      const RatioBar& b = c.groups[g].bars[i];
      const double x = gx + static_cast<double>(i) * bar;
      if (!(b.value > 0) || !std::isfinite(b.value)) continue;
      const double y0 = y(1), y1 = y(b.value);
      svg.rect(x + 1, std::min(y0, y1), bar - 2, std::max(std::fabs(y1 - y0), 0.8),
               c.colors[b.series], "mark", b.tooltip);
      if (b.ci && std::isfinite(b.ci->first) && std::isfinite(b.ci->second) && b.ci->first > 0) {
        const double cx = x + bar / 2;
        svg.line(cx, y(b.ci->first), cx, y(b.ci->second), "#222", "whisker");
        svg.line(cx - 2.5, y(b.ci->first), cx + 2.5, y(b.ci->first), "#222", "whisker");
        svg.line(cx - 2.5, y(b.ci->second), cx + 2.5, y(b.ci->second), "#222", "whisker");
      }
    }
    const double label_x = gx + static_cast<double>(c.groups[g].bars.size()) * bar / 2;
    svg.text(label_x, top + plot_height + 12, c.groups[g].label, "end", "tick", -40);
  }
  return svg.str();
}

}  // namespace heapscope::site
