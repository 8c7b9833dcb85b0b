// How deeply arrays and objects nest in JSON text, for readers of untrusted files: nlohmann
// parses any depth without recursion, but copying, comparing, dumping and schema-validating
// a document recurse once per level, so 100000 '[' overflow the stack. A reader checks the
// text first and refuses anything deeper than kMaxJsonNesting with its own error.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace heapscope::base {

// Far above any document heapscope writes (raw runs nest about 6 levels), far below a depth
// whose recursion could exhaust a thread's stack.
inline constexpr std::size_t kMaxJsonNesting = 256;

// The deepest nesting of '[' and '{' outside strings. Not a validator: malformed text gets a
// number too, and the parser rejects it afterwards.
inline std::size_t json_nesting_depth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace heapscope::base
