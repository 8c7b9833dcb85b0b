// A growable byte buffer backed by raw OS pages (os::map_pages), never by the allocator: the
// profiler builds dumps and snapshots in these so it cannot recurse into malloc.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace heapscope::prof {

class OsBuffer {
 public:
  OsBuffer() = default;
  ~OsBuffer();
  OsBuffer(const OsBuffer&) = delete;
  OsBuffer& operator=(const OsBuffer&) = delete;

  // Appends bytes; false (and the buffer marked failed) if memory could not be had.
  bool append(const void* data, size_t len);
  bool append_char(char c) { return append(&c, 1); }
  bool append_str(const char* s);
  // printf-style append into the buffer (vsnprintf; no allocation).
  bool appendf(const char* format, ...) __attribute__((format(printf, 2, 3)));
  // Reserves `len` more bytes and returns where they start (nullptr on failure); the caller
  // fills them and calls commit(len).
  uint8_t* reserve(size_t len);
  void commit(size_t len) { size_ += len; }

  const uint8_t* data() const { return data_; }
  uint8_t* data() { return data_; }
  size_t size() const { return size_; }
  bool failed() const { return failed_; }
  void clear() { size_ = 0; }

 private:
  bool grow(size_t needed);
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  bool failed_ = false;
};

}  // namespace heapscope::prof
