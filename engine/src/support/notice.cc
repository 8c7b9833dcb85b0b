#include "support/notice.h"

#include <string.h>

#include "core/options.h"
#include "platform/platform.h"

namespace heapscope {

void notice(const char* a, const char* b, const char* c, const char* d, const char* e) {
  char line[512];
  constexpr char kPrefix[] = "heapscope: ";
  size_t len = sizeof kPrefix - 1;
  memcpy(line, kPrefix, len);
  const char* pieces[] = {a, b, c, d, e};
  for (const char* piece : pieces) {
    size_t n = strnlen(piece, sizeof line - 1 - len);
    memcpy(line + len, piece, n);
    len += n;
  }
  line[len++] = '\n';
  os::write_all(2, line, len);
}

void verbose_notice(const char* a, const char* b, const char* c, const char* d, const char* e) {
  if (option(hs_option_verbose) != 0) notice(a, b, c, d, e);
}

}  // namespace heapscope
