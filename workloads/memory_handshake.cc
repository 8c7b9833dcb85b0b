#include "workloads/memory_handshake.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace heapscope::workloads {
namespace {

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

bool MemoryHandshake::exchange(const char* line, const char* expect) const {
  if (fd_ < 0) return true;
  char out[64];
  const std::size_t len = std::strlen(line);
  if (len + 1 > sizeof out) return false;
  std::memcpy(out, line, len);
  out[len] = '\n';
  if (!write_all(fd_, out, len + 1)) return false;
  char in[64];
  std::size_t got = 0;
  while (got < sizeof in) {  // one byte at a time: never read past the answer's newline
    const ssize_t r = ::read(fd_, in + got, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    if (in[got] == '\n') return got == std::strlen(expect) && std::memcmp(in, expect, got) == 0;
    ++got;
  }
  return false;
}

}  // namespace heapscope::workloads
