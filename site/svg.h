// Server-side SVG primitives: an accessible canvas (role="img", <title>, <desc>,
// aria-labelledby), shapes with fixed-precision coordinates, scales and tick choice, and the
// series palette. Every data mark carries class "mark" and a <title> with its value, so a
// browser test can count what was drawn and a reader can hover for numbers.
#pragma once

#include <string>
#include <vector>

namespace heapscope::site {

std::string xml_escape(const std::string& text);

// Okabe-Ito colours (distinguishable with common colour-vision deficiencies), by series index;
// the baseline is drawn in grey.
std::string series_color(std::size_t index);
inline constexpr const char* kBaselineColor = "#6b6b6b";

class Svg {
 public:
  // id: unique within the page (used for the title/desc ids).
  Svg(double width, double height, const std::string& id, const std::string& title,
      const std::string& desc);

  void rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& cls = "", const std::string& tooltip = "");
  void line(double x1, double y1, double x2, double y2, const std::string& stroke,
            const std::string& cls = "", double width = 1, bool dashed = false);
  void circle(double cx, double cy, double r, const std::string& fill, const std::string& cls = "",
              const std::string& tooltip = "");
  void polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke,
                const std::string& cls = "", double width = 1.5);
  // anchor: "start", "middle" or "end"; rotate: degrees around (x, y).
  void text(double x, double y, const std::string& s, const std::string& anchor = "start",
            const std::string& cls = "", double rotate = 0);
  // A legend of (name, colour) swatches from (x, y), wrapped onto a new row at the canvas's
  // right edge.
  void legend(double x, double y, const std::vector<std::pair<std::string, std::string>>& entries);
  // How many rows legend() takes from x on a canvas `width` wide (so a chart can make room).
  static int legend_rows(double x, double width,
                         const std::vector<std::pair<std::string, std::string>>& entries);
  static constexpr double kLegendRowHeight = 14;

  double width() const { return width_; }
  double height() const { return height_; }
  std::string str() const;

 private:
  double width_, height_;
  std::string id_, title_, desc_, body_;
};

// Maps [d0, d1] to [r0, r1]; log = true maps log(x) (x > 0).
struct Scale {
  double d0, d1, r0, r1;
  bool log = false;
  double operator()(double x) const;
};

// About `count` round tick values covering [lo, hi] (1, 2, 5 x 10^k steps).
std::vector<double> linear_ticks(double lo, double hi, int count);

// Ratio ticks for the log axis `scale`: 1.0 always, then outwards 1.1, 1.25, 1.5, 2, 3, 5,
// 10 ... and their reciprocals, each kept only when at least `min_gap` pixels from the last
// one kept, so wide ranges do not pile labels up.
std::vector<double> ratio_ticks(const Scale& scale, double min_gap = 16);

}  // namespace heapscope::site
