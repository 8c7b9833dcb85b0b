// Fixed number formatting for pages and charts: the same double always prints the same text
// (printf with fixed precision, C locale), so sites are byte-identical for identical inputs.
#pragma once

#include <string>

namespace heapscope::site {

// "%.<digits>f"; "n/a" for NaN/inf.
std::string fixed(double value, int digits);

// Ratios such as paired effects: 3 decimals ("1.027").
std::string ratio(double value);

// Ratio axis labels: "0.67", "1.00", "2.00", "20".
std::string ratio_tick(double value);

// Operations per second with an SI prefix and 3 significant digits: "71.2 M".
std::string rate_si(double ops_per_sec);

// Bytes as MiB with one decimal: "8.4".
std::string mib(double bytes);

// SVG coordinates: one decimal.
std::string coord(double value);

}  // namespace heapscope::site
