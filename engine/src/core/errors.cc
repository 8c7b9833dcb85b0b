// The non-allocating error path: messages are formatted into a stack buffer and written with
// write(2), because the allocator cannot call anything that might allocate.
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "platform/platform.h"
#include "support/format.h"

namespace heapscope {

static void report(const char* message, const void* ptr) {
  char buffer[256];
  size_t len = strnlen(message, 200);
  memcpy(buffer, message, len);
  if (ptr != nullptr) {
    const char* prefix = " (pointer 0x";
    memcpy(buffer + len, prefix, strlen(prefix));
    len += strlen(prefix);
    len += fmt::hex(reinterpret_cast<uintptr_t>(ptr), buffer + len);
    buffer[len++] = ')';
  }
  buffer[len++] = '\n';
  os::write_all(2, buffer, len);
}

void fatal(const char* message, const void* ptr) {
  report(message, ptr);
  abort();
}

void warning(const char* message, const void* ptr) {
  if (option(hs_option_verbose) != 0) report(message, ptr);
}

}  // namespace heapscope
