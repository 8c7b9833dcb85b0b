// HTML building blocks for the site's pages: escaping, the page shell (local stylesheet,
// navigation, no scripts, no remote assets) and tables.
#pragma once

#include <string>
#include <vector>

#include "site_json.h"

namespace heapscope::site {

std::string html_escape(const std::string& text);

// A whole page: <title>, style.css, the navigation with `file` marked current, and `body`.
std::string html_page(const std::string& title, const std::string& file, const std::string& body);

// Cells are HTML (escape text with html_escape first).
std::string html_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows,
                       const std::string& caption = "", const std::string& cls = "");

// A fragment id from arbitrary text ([A-Za-z0-9-] only).
std::string anchor(const std::string& text);

// The pages' shared view of what is published.
// clang-tidy: nlohmann's noexcept null constructor delegates to the value-kind constructor,
// which can throw only for kinds other than null.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct SiteModel {
  Json latest;                    // the envelope
  std::vector<const Json*> raws;  // runs[i]'s raw run
  std::vector<Json> history;      // all history rows, in file order
};

// JSON number or null as double (NaN for null).
double number(const Json& v);

std::string index_page(const SiteModel& model);
std::string scaling_page(const SiteModel& model);
std::string memory_page(const SiteModel& model);
std::string latency_page(const SiteModel& model);
std::string provenance_page(const SiteModel& model);
std::string reproduce_page(const SiteModel& model);
std::string suite_page(const SiteModel& model);

// Page file names, in navigation order.
inline constexpr const char* kIndexPage = "index.html";
inline constexpr const char* kScalingPage = "scaling.html";
inline constexpr const char* kMemoryPage = "memory.html";
inline constexpr const char* kLatencyPage = "latency.html";
inline constexpr const char* kSuitePage = "suite.html";
inline constexpr const char* kProvenancePage = "provenance.html";
inline constexpr const char* kReproducePage = "reproduce.html";

}  // namespace heapscope::site
