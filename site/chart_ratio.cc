#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "charts.h"
#include "number_format.h"
#include "svg.h"

namespace heapscope::site {

std::string ratio_chart(const RatioChart& c) {
  // Layout: left axis, groups of bars, the legend at the top, wrapped onto as many rows as
  // the plot's width needs (many allocators must not widen the chart past its grid column).
  const double left = 62, right = 16, bottom = 92, bar = 9, gap = 16;
  std::size_t per_group = 1;
  for (const RatioGroup& g : c.groups) per_group = std::max(per_group, g.bars.size());
  const double group_width = static_cast<double>(per_group) * bar + gap;
  const double plot_width = std::max({360.0, 7.5 * static_cast<double>(c.title.size()),
                                      static_cast<double>(c.groups.size()) * group_width});
  std::vector<std::pair<std::string, std::string>> legend;
  for (std::size_t s = 0; s < c.series.size(); ++s) legend.emplace_back(c.series[s], c.colors[s]);
  const int legend_rows = Svg::legend_rows(left, left + plot_width + right, legend);
  const double top = 70 + Svg::kLegendRowHeight * std::max(0, legend_rows - 1);
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
  svg.text(left, 40, c.better, "start", "note");
  svg.legend(left, 50, legend);

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
