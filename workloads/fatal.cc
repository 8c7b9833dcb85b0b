#include "workloads/fatal.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace heapscope::workloads {

void fatal(const char* what) {
  char buf[256] = "hs-workload: internal error: ";
  std::strncat(buf, what, sizeof buf - std::strlen(buf) - 2);
  std::strcat(buf, "\n");
  [[maybe_unused]] const auto n = ::write(2, buf, std::strlen(buf));
  std::_Exit(70);
}

}  // namespace heapscope::workloads
