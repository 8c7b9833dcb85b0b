// One field of a /proc/<pid>/status text ("VmRSS:   1560 kB"), in bytes: the one parse of
// that file for the harness (tree samples, the campaign memory sampler, suite servers' peaks).
// status, not statm: since Linux 6.2 statm reads the per-CPU RSS counters without summing them.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace heapscope::harness {

// `text` is NUL-terminated; `field` is the name before the colon ("VmRSS", "RssAnon",
// "VmHWM"). nullopt when no line holds that field with a number.
inline std::optional<std::uint64_t> proc_status_bytes(const char* text, const char* field) {
  const std::size_t length = std::strlen(field);
  for (const char* line = text; line != nullptr && *line != '\0';) {
    if (std::strncmp(line, field, length) == 0 && line[length] == ':') {
      char* end = nullptr;
      const unsigned long long kib = std::strtoull(line + length + 1, &end, 10);
      if (end == line + length + 1) return std::nullopt;
      return static_cast<std::uint64_t>(kib) * 1024;
    }
    line = std::strchr(line, '\n');
    if (line != nullptr) ++line;
  }
  return std::nullopt;
}

}  // namespace heapscope::harness
