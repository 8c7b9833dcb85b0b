#include "svg.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "number_format.h"

namespace heapscope::site {

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string series_color(std::size_t index) {
  static constexpr std::array<const char*, 8> kPalette = {
      "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#8c6d00", "#000000"};
  return kPalette[index % kPalette.size()];
}

Svg::Svg(double width, double height, const std::string& id, const std::string& title,
         const std::string& desc)
    : width_(width), height_(height), id_(id), title_(title), desc_(desc) {}

namespace {

std::string attr_class(const std::string& cls) {
  return cls.empty() ? "" : " class=\"" + xml_escape(cls) + "\"";
}

std::string tooltip_element(const std::string& tooltip) {
  return tooltip.empty() ? "" : "<title>" + xml_escape(tooltip) + "</title>";
}

}  // namespace

void Svg::rect(double x, double y, double w, double h, const std::string& fill,
               const std::string& cls, const std::string& tooltip) {
  body_ += "<rect x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"" + coord(w) +
           "\" height=\"" + coord(h) + "\" fill=\"" + fill + "\"" + attr_class(cls);
  body_ += tooltip.empty() ? "/>\n" : ">" + tooltip_element(tooltip) + "</rect>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, const std::string& stroke,
               const std::string& cls, double width, bool dashed) {
  body_ += "<line x1=\"" + coord(x1) + "\" y1=\"" + coord(y1) + "\" x2=\"" + coord(x2) +
           "\" y2=\"" + coord(y2) + "\" stroke=\"" + stroke + "\" stroke-width=\"" + coord(width) +
           "\"" + (dashed ? " stroke-dasharray=\"4 3\"" : "") + attr_class(cls) + "/>\n";
}

void Svg::circle(double cx, double cy, double r, const std::string& fill, const std::string& cls,
                 const std::string& tooltip) {
  body_ += "<circle cx=\"" + coord(cx) + "\" cy=\"" + coord(cy) + "\" r=\"" + coord(r) +
           "\" fill=\"" + fill + "\"" + attr_class(cls);
  body_ += tooltip.empty() ? "/>\n" : ">" + tooltip_element(tooltip) + "</circle>\n";
}

void Svg::polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke,
                   const std::string& cls, double width) {
  if (points.size() < 2) return;
  body_ += "<polyline fill=\"none\" stroke=\"" + stroke + "\" stroke-width=\"" + coord(width) +
           "\"" + attr_class(cls) + " points=\"";
  for (std::size_t i = 0; i < points.size(); ++i) {
    body_ += (i ? " " : "") + coord(points[i].first) + "," + coord(points[i].second);
  }
  body_ += "\"/>\n";
}

void Svg::text(double x, double y, const std::string& s, const std::string& anchor,
               const std::string& cls, double rotate) {
  body_ += "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" text-anchor=\"" + anchor + "\"" +
           attr_class(cls);
  if (rotate != 0) {
    body_ += " transform=\"rotate(" + coord(rotate) + " " + coord(x) + " " + coord(y) + ")\"";
  }
  body_ += ">" + xml_escape(s) + "</text>\n";
}

namespace {

double legend_entry_width(const std::string& name) {
  return 24 + 7 * static_cast<double>(name.size());
}

}  // namespace

int Svg::legend_rows(double x, double width,
                     const std::vector<std::pair<std::string, std::string>>& entries) {
  int rows = entries.empty() ? 0 : 1;
  double lx = x;
  for (const auto& entry : entries) {
    const double w = legend_entry_width(entry.first);
    if (lx + w > width && lx > x) {
      lx = x;
      ++rows;
    }
    lx += w;
  }
  return rows;
}

void Svg::legend(double x, double y,
                 const std::vector<std::pair<std::string, std::string>>& entries) {
  double lx = x, ly = y;
  for (const auto& [name, color] : entries) {
    const double w = legend_entry_width(name);
    if (lx + w > width_ && lx > x) {
      lx = x;
      ly += kLegendRowHeight;
    }
    rect(lx, ly, 10, 10, color, "legend-swatch");
    text(lx + 14, ly + 9, name, "start", "legend");
    lx += w;
  }
}

std::string Svg::str() const {
  // Inline in HTML, where the parser puts <svg> in the SVG namespace: no xmlns (and no URL).
  return "<svg class=\"chart\" role=\"img\" width=\"" + coord(width_) + "\" height=\"" +
         coord(height_) + "\" viewBox=\"0 0 " + coord(width_) + " " + coord(height_) +
         "\" aria-labelledby=\"" + id_ + "-title " + id_ + "-desc\">\n" + "<title id=\"" + id_ +
         "-title\">" + xml_escape(title_) + "</title>\n<desc id=\"" + id_ + "-desc\">" +
         xml_escape(desc_) + "</desc>\n" + body_ + "</svg>\n";
}

double Scale::operator()(double x) const {
  const double a = log ? std::log(d0) : d0;
  const double b = log ? std::log(d1) : d1;
  const double v = log ? std::log(x) : x;
  if (b == a) return (r0 + r1) / 2;
  return r0 + (v - a) / (b - a) * (r1 - r0);
}

std::vector<double> linear_ticks(double lo, double hi, int count) {
  std::vector<double> ticks;
  if (!(hi > lo) || count < 1) return {lo};
  const double raw = (hi - lo) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

std::vector<double> ratio_ticks(const Scale& scale, double min_gap) {
  const double lo = std::min(scale.d0, scale.d1), hi = std::max(scale.d0, scale.d1);
  std::vector<double> ticks{1.0};
  for (int direction : {1, -1}) {
    double last = scale(1.0);
    for (double step : {1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0}) {
      const double t = direction > 0 ? step : 1 / step;
      if (t < lo * 0.999 || t > hi * 1.001) continue;
      if (std::fabs(scale(t) - last) < min_gap) continue;
      ticks.push_back(t);
      last = scale(t);
    }
  }
  std::sort(ticks.begin(), ticks.end());
  return ticks;
}

}  // namespace heapscope::site
