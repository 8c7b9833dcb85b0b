#include "number_format.h"

#include <cmath>
#include <cstdio>

namespace heapscope::site {

std::string fixed(double value, int digits) {
  if (!std::isfinite(value)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string ratio(double value) { return fixed(value, 3); }

std::string ratio_tick(double value) { return fixed(value, value >= 10 ? 0 : 2); }

std::string rate_si(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  static constexpr struct {
    double scale;
    const char* prefix;
  } kPrefixes[] = {{1e9, " G"}, {1e6, " M"}, {1e3, " k"}, {1, " "}};
  for (const auto& p : kPrefixes) {
    if (std::fabs(v) >= p.scale || p.scale == 1) {
      const double scaled = v / p.scale;
      const int digits = std::fabs(scaled) >= 100 ? 0 : std::fabs(scaled) >= 10 ? 1 : 2;
      return fixed(scaled, digits) + p.prefix;
    }
  }
  return fixed(v, 0);
}

std::string mib(double bytes) { return fixed(bytes / 1048576.0, 1); }

std::string coord(double value) { return fixed(value, 1); }

}  // namespace heapscope::site
