// Protocol-buffer wire encoding, just what profile.proto needs: varints, varint fields,
// length-delimited fields (strings, packed scalars, submessages) and the interned string
// table. Appends to an OsBuffer (gzip_writer.h compresses the result).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "profiler/os_buffer.h"

namespace heapscope::prof::proto {

enum WireType : uint32_t { kVarint = 0, kLengthDelimited = 2 };

size_t varint_size(uint64_t value);
bool put_varint(OsBuffer& out, uint64_t value);
bool put_tag(OsBuffer& out, uint32_t field, WireType type);

// A varint field; zero values are omitted (proto3 default) unless `always` is set.
bool put_uint64(OsBuffer& out, uint32_t field, uint64_t value, bool always = false);
// Negative values go out as 10-byte two's complement varints (int64, not zigzag).
inline bool put_int64(OsBuffer& out, uint32_t field, int64_t value) {
  return put_uint64(out, field, static_cast<uint64_t>(value));
}
bool put_bytes(OsBuffer& out, uint32_t field, const void* data, size_t len);
inline bool put_message(OsBuffer& out, uint32_t field, const OsBuffer& message) {
  return put_bytes(out, field, message.data(), message.size());
}
// Packed repeated uint64/int64 (both readers accept packed and unpacked).
bool put_packed(OsBuffer& out, uint32_t field, const uint64_t* values, size_t count);

}  // namespace heapscope::prof::proto

namespace heapscope::prof {

// profile.proto's string_table: strings interned once, index 0 always "". Memory is OsBuffer
// only. An out-of-memory failure makes intern return 0 and failed() true.
class StringTable {
 public:
  StringTable();
  uint64_t intern(const char* s, size_t len);
  uint64_t intern(const char* s);
  // The NUL-terminated string at `index` (valid until the next intern).
  const char* at(uint64_t index) const;
  size_t size() const { return count_; }
  bool failed() const { return failed_; }
  // Writes every string as a repeated `field`, in index order ("" first, as `32 00`).
  bool encode(OsBuffer& out, uint32_t field) const;

 private:
  struct Entry {
    uint64_t offset;  // into bytes_
    uint64_t len;
  };
  const Entry* entries() const { return reinterpret_cast<const Entry*>(entries_.data()); }
  uint32_t* slots() { return reinterpret_cast<uint32_t*>(slots_.data()); }
  bool rehash(size_t slot_count);
  bool insert_slot(uint64_t hash, uint32_t index);

  OsBuffer bytes_;    // the strings, each NUL-terminated
  OsBuffer entries_;  // Entry per index
  OsBuffer slots_;    // open addressing: index + 1, 0 = empty
  size_t count_ = 0;
  size_t slot_count_ = 0;  // a power of two
  bool failed_ = false;
};

}  // namespace heapscope::prof
