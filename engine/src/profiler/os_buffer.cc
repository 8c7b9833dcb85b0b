#include "profiler/os_buffer.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "platform/platform.h"

namespace heapscope::prof {

OsBuffer::~OsBuffer() {
  if (data_ != nullptr) os::unmap(data_, capacity_);
}

bool OsBuffer::grow(size_t needed) {
  if (failed_) return false;
  size_t want = capacity_ == 0 ? 64 * 1024 : capacity_;
  while (want < needed) {
    if (want > SIZE_MAX / 2) {
      failed_ = true;
      return false;
    }
    want *= 2;
  }
  void* memory = data_ == nullptr ? os::map_pages(want) : os::remap_pages(data_, capacity_, want);
  if (memory == nullptr) {
    failed_ = true;
    return false;
  }
  data_ = static_cast<uint8_t*>(memory);
  capacity_ = want;
  return true;
}

uint8_t* OsBuffer::reserve(size_t len) {
  if (size_ + len < size_) {
    failed_ = true;
    return nullptr;
  }
  if (size_ + len > capacity_ && !grow(size_ + len)) return nullptr;
  return data_ + size_;
}

bool OsBuffer::append(const void* data, size_t len) {
  uint8_t* out = reserve(len);
  if (out == nullptr) return len == 0 && !failed_;
  memcpy(out, data, len);
  size_ += len;
  return true;
}

bool OsBuffer::append_str(const char* s) { return append(s, strlen(s)); }

bool OsBuffer::appendf(const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n < 0) return false;
  if (static_cast<size_t>(n) < sizeof line) return append(line, static_cast<size_t>(n));
  // Longer than the stack line: format straight into the buffer.
  uint8_t* out = reserve(static_cast<size_t>(n) + 1);
  if (out == nullptr) return false;
  va_start(args, format);
  vsnprintf(reinterpret_cast<char*>(out), static_cast<size_t>(n) + 1, format, args);
  va_end(args);
  size_ += static_cast<size_t>(n);
  return true;
}

}  // namespace heapscope::prof
