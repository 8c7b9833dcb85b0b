// The JSON type of the site library and its one exception type.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace heapscope::site {

// Insertion-ordered, like the harness's raw runs and summaries, so output order is the order
// the builders write (stable, hence byte-identical sites).
using Json = nlohmann::ordered_json;

// Every refusal of publish/verify: the message names the file and the problem.
class SiteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace heapscope::site
