#include "html.h"

#include <cctype>
#include <cmath>

#include "svg.h"

namespace heapscope::site {

std::string html_escape(const std::string& text) { return xml_escape(text); }

double number(const Json& v) { return v.is_number() ? v.get<double>() : std::nan(""); }

std::string anchor(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  }
  return out;
}

std::string html_page(const std::string& title, const std::string& file, const std::string& body) {
  static const std::pair<const char*, const char*> kNav[] = {
      {kIndexPage, "Overview"},     {kSuitePage, "Suites"},    {kScalingPage, "Thread scaling"},
      {kMemoryPage, "Memory"},      {kLatencyPage, "Latency"}, {kProvenancePage, "Provenance"},
      {kReproducePage, "Reproduce"}};
  std::string nav;
  for (const auto& [href, label] : kNav) {
    nav += std::string("<a href=\"") + href + "\"" +
           (file == href ? " aria-current=\"page\"" : "") + ">" + label + "</a>\n";
  }
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<title>" +
         html_escape(title) +
         "</title>\n<link rel=\"stylesheet\" href=\"style.css\">\n</head>\n<body>\n"
         "<header><p class=\"brand\">heapscope results</p><nav aria-label=\"Pages\">\n" +
         nav +
         "<a href=\"latest.json\">latest.json</a>\n<a href=\"history.jsonl\">history.jsonl</a>\n"
         "<a href=\"manifest.json\">manifest.json</a>\n</nav></header>\n<main>\n" +
         body +
         "</main>\n<footer>Static site written by <code>hsbench publish</code>; check it with "
         "<code>hsbench verify DIR</code>. No scripts, no network.</footer>\n</body>\n</html>\n";
}

std::string html_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows,
                       const std::string& caption, const std::string& cls) {
  std::string t = "<div class=\"table-wrap\"><table" +
                  (cls.empty() ? std::string() : " class=\"" + cls + "\"") + ">\n";
  if (!caption.empty()) t += "<caption>" + caption + "</caption>\n";
  t += "<thead><tr>";
  for (const std::string& h : header) t += "<th scope=\"col\">" + h + "</th>";
  t += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    t += "<tr>";
    for (const std::string& cell : row) t += "<td>" + cell + "</td>";
    t += "</tr>\n";
  }
  return t + "</tbody></table></div>\n";
}

}  // namespace heapscope::site
