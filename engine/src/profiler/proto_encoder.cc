#include "profiler/proto_encoder.h"

#include "core/common.h"
#include "platform/platform.h"

#if HS_PROFILER

#include <string.h>

namespace heapscope::prof::proto {

size_t varint_size(uint64_t value) {
  size_t size = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++size;
  }
  return size;
}

bool put_varint(OsBuffer& out, uint64_t value) {
  uint8_t* bytes = out.reserve(10);
  if (bytes == nullptr) return false;
  size_t n = 0;
  while (value >= 0x80) {
    bytes[n++] = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  bytes[n++] = static_cast<uint8_t>(value);
  out.commit(n);
  return true;
}

bool put_tag(OsBuffer& out, uint32_t field, WireType type) {
  return put_varint(out, (uint64_t{field} << 3) | type);
}

bool put_uint64(OsBuffer& out, uint32_t field, uint64_t value, bool always) {
  if (value == 0 && !always) return true;
  return put_tag(out, field, kVarint) && put_varint(out, value);
}

bool put_bytes(OsBuffer& out, uint32_t field, const void* data, size_t len) {
  return put_tag(out, field, kLengthDelimited) && put_varint(out, len) && out.append(data, len);
}

bool put_packed(OsBuffer& out, uint32_t field, const uint64_t* values, size_t count) {
  if (count == 0) return true;
  size_t len = 0;
  for (size_t i = 0; i < count; ++i) len += varint_size(values[i]);
  if (!put_tag(out, field, kLengthDelimited) || !put_varint(out, len)) return false;
  for (size_t i = 0; i < count; ++i) {
    if (!put_varint(out, values[i])) return false;
  }
  return true;
}

}  // namespace heapscope::prof::proto

namespace heapscope::prof {
namespace {

uint64_t hash_bytes(const char* s, size_t len) {  // FNV-1a
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < len; ++i) {
    hash ^= static_cast<uint8_t>(s[i]);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace

StringTable::StringTable() { intern("", 0); }

uint64_t StringTable::intern(const char* s) { return intern(s, strlen(s)); }

const char* StringTable::at(uint64_t index) const {
  return reinterpret_cast<const char*>(bytes_.data()) + entries()[index].offset;
}

bool StringTable::insert_slot(uint64_t hash, uint32_t index) {
  size_t mask = slot_count_ - 1;
  for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    if (slots()[slot] == 0) {
      slots()[slot] = index + 1;
      return true;
    }
  }
}

// Keeps the table at most half full; the slots are rebuilt from the entries.
bool StringTable::rehash(size_t slot_count) {
  slots_.clear();
  uint8_t* memory = slots_.reserve(slot_count * sizeof(uint32_t));
  if (memory == nullptr) return false;
  memset(memory, 0, slot_count * sizeof(uint32_t));
  slots_.commit(slot_count * sizeof(uint32_t));
  slot_count_ = slot_count;
  for (size_t i = 0; i < count_; ++i) {
    const Entry& entry = entries()[i];
    insert_slot(hash_bytes(at(i), entry.len), static_cast<uint32_t>(i));
  }
  return true;
}

uint64_t StringTable::intern(const char* s, size_t len) {
  if (failed_) return 0;
  if (2 * (count_ + 1) > slot_count_ && !rehash(slot_count_ == 0 ? 256 : 2 * slot_count_)) {
    failed_ = true;
    return 0;
  }
  uint64_t hash = hash_bytes(s, len);
  size_t mask = slot_count_ - 1;
  for (size_t slot = hash & mask; slots()[slot] != 0; slot = (slot + 1) & mask) {
    uint32_t index = slots()[slot] - 1;
    const Entry& entry = entries()[index];
    if (entry.len == len && memcmp(at(index), s, len) == 0) return index;
  }
  Entry entry{bytes_.size(), len};
  if (!bytes_.append(s, len) || !bytes_.append_char('\0') ||
      !entries_.append(&entry, sizeof entry)) {
    failed_ = true;
    return 0;
  }
  uint32_t index = static_cast<uint32_t>(count_++);
  insert_slot(hash, index);
  return index;
}

bool StringTable::encode(OsBuffer& out, uint32_t field) const {
  for (size_t i = 0; i < count_; ++i) {
    if (!proto::put_bytes(out, field, at(i), entries()[i].len)) return false;
  }
  return true;
}

}  // namespace heapscope::prof

#endif  // HS_PROFILER
