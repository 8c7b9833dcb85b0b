// Files compiled into the library (site/CMakeLists.txt): the JSON Schemas and the stylesheet.
#pragma once

#include <string_view>
#include <vector>

namespace heapscope::site {

struct EmbeddedFile {
  std::string_view name;  // "raw-run", "summary", "latest", "history-row", "manifest", "style.css"
  std::string_view source;  // path under site/, e.g. "schemas/raw-run.schema.json"
  std::string_view dest;    // path in a published site
  std::string_view text;
};

const std::vector<EmbeddedFile>& embedded_files();

}  // namespace heapscope::site
