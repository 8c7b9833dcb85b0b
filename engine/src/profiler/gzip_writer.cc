#include "profiler/gzip_writer.h"

#include "core/common.h"
#include "platform/platform.h"

#if HS_PROFILER

#include <string.h>

namespace heapscope::prof {

namespace {

// ---- CRC-32 ---------------------------------------------------------------------------------

struct CrcTable {
  uint32_t entry[256];
};

constexpr CrcTable make_crc_table() {
  CrcTable table{};
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table.entry[n] = c;
  }
  return table;
}

// In .rodata: computed by the compiler, so there is nothing to initialize or race on.
constexpr CrcTable kCrcTable = make_crc_table();

// ---- deflate's fixed codes (RFC 1951 3.2.5, 3.2.6) ------------------------------------------

constexpr uint16_t kLengthBase[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr uint16_t kDistanceBase[30] = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr uint8_t kDistanceExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                        6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

constexpr size_t kWindow = 32768;
constexpr size_t kMinMatch = 3;
constexpr size_t kMaxMatch = 258;
constexpr int kHashBits = 15;
constexpr size_t kHashSize = size_t{1} << kHashBits;
// Candidates looked at per position: more finds longer matches, slower; profiles are small.
constexpr int kMaxChain = 32;
constexpr uint32_t kNoPosition = UINT32_MAX;

// Bits go out least significant first; Huffman codes are defined most significant bit first,
// so they are reversed before being put.
class BitWriter {
 public:
  explicit BitWriter(uint8_t* out) : out_(out) {}

  void put(uint32_t bits, int count) {
    accumulator_ |= uint64_t{bits} << filled_;
    filled_ += count;
    while (filled_ >= 8) {
      out_[written_++] = static_cast<uint8_t>(accumulator_);
      accumulator_ >>= 8;
      filled_ -= 8;
    }
  }
  void put_code(uint32_t code, int length) { put(reverse(code, length), length); }
  // Pads to a byte boundary; returns the bytes written.
  size_t finish() {
    if (filled_ > 0) put(0, 8 - filled_);
    return written_;
  }

 private:
  static uint32_t reverse(uint32_t code, int length) {
    uint32_t reversed = 0;
    for (int i = 0; i < length; ++i) reversed |= ((code >> i) & 1) << (length - 1 - i);
    return reversed;
  }
  uint8_t* out_;
  size_t written_ = 0;
  uint64_t accumulator_ = 0;
  int filled_ = 0;
};

// Literal/length symbol 0..287 in the fixed code.
void put_symbol(BitWriter& bits, uint32_t symbol) {
  if (symbol < 144) {
    bits.put_code(0x30 + symbol, 8);
  } else if (symbol < 256) {
    bits.put_code(0x190 + (symbol - 144), 9);
  } else if (symbol < 280) {
    bits.put_code(symbol - 256, 7);
  } else {
    bits.put_code(0xC0 + (symbol - 280), 8);
  }
}

void put_match(BitWriter& bits, size_t length, size_t distance) {
  int code = 28;
  while (kLengthBase[code] > length) --code;
  put_symbol(bits, 257 + static_cast<uint32_t>(code));
  bits.put(static_cast<uint32_t>(length - kLengthBase[code]), kLengthExtra[code]);
  int dcode = 29;
  while (kDistanceBase[dcode] > distance) --dcode;
  bits.put_code(static_cast<uint32_t>(dcode), 5);
  bits.put(static_cast<uint32_t>(distance - kDistanceBase[dcode]), kDistanceExtra[dcode]);
}

uint32_t hash3(const uint8_t* p) {
  uint32_t v = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16;
  return (v * 0x9E3779B1u) >> (32 - kHashBits);
}

// The hash chains: head[hash] is the latest position with that 3-byte prefix, prev[position
// mod window] the one before it.
struct MatchFinder {
  uint32_t* head;
  uint32_t* prev;

  void insert(const uint8_t* data, size_t position) {
    uint32_t h = hash3(data + position);
    prev[position % kWindow] = head[h];
    head[h] = static_cast<uint32_t>(position);
  }

  // The longest earlier match for `position` within the window (length 0 if none of 3+).
  size_t longest(const uint8_t* data, size_t len, size_t position, size_t* distance) const {
    size_t limit = len - position < kMaxMatch ? len - position : kMaxMatch;
    size_t best = 0;
    uint32_t candidate = head[hash3(data + position)];
    for (int chain = 0; chain < kMaxChain && candidate != kNoPosition; ++chain) {
      if (position - candidate > kWindow) break;
      const uint8_t* a = data + candidate;
      const uint8_t* b = data + position;
      if (a[best] == b[best]) {  // cannot beat `best` otherwise
        size_t n = 0;
        while (n < limit && a[n] == b[n]) ++n;
        if (n > best) {
          best = n;
          *distance = position - candidate;
          if (n == limit) break;
        }
      }
      uint32_t next = prev[candidate % kWindow];
      if (next == kNoPosition || next >= candidate) break;  // the slot was reused
      candidate = next;
    }
    return best >= kMinMatch ? best : 0;
  }
};

// Worst case of the fixed code: 9 bits per literal, or 31 bits for a 3-byte match.
size_t deflate_bound(size_t len) { return len / 24 * 31 + len % 24 * 2 + 16; }

size_t deflate_fixed(const uint8_t* data, size_t len, MatchFinder& finder, uint8_t* out) {
  BitWriter bits(out);
  bits.put(1, 1);  // BFINAL: the only block
  bits.put(1, 2);  // BTYPE 01: fixed Huffman codes
  size_t position = 0;
  while (position < len) {
    size_t distance = 0;
    size_t match = len - position >= kMinMatch ? finder.longest(data, len, position, &distance) : 0;
    if (match == 0) {
      put_symbol(bits, data[position]);
      if (len - position >= kMinMatch) finder.insert(data, position);
      ++position;
      continue;
    }
    put_match(bits, match, distance);
    for (size_t end = position + match; position < end; ++position) {
      if (len - position >= kMinMatch) finder.insert(data, position);
    }
  }
  put_symbol(bits, 256);  // end of block
  return bits.finish();
}

void put_le32(uint8_t* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

}  // namespace

uint32_t crc32(const uint8_t* data, size_t len) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < len; ++i) c = kCrcTable.entry[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

bool gzip_append(const uint8_t* data, size_t len, OsBuffer& out) {
  if (len >= kNoPosition) return false;  // positions are 32-bit; no profile is near
  // ID1 ID2, CM = deflate, no flags, no mtime, XFL 0, OS = Unix.
  static constexpr uint8_t kHeader[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  size_t bound = sizeof kHeader + deflate_bound(len) + 8;
  uint8_t* target = out.reserve(bound);
  if (target == nullptr) return false;
  size_t table_bytes = (kHashSize + kWindow) * sizeof(uint32_t);
  void* tables = os::map_pages(table_bytes);
  if (tables == nullptr) return false;
  MatchFinder finder{static_cast<uint32_t*>(tables), static_cast<uint32_t*>(tables) + kHashSize};
  memset(finder.head, 0xFF, kHashSize * sizeof(uint32_t));  // kNoPosition everywhere
  memset(finder.prev, 0xFF, kWindow * sizeof(uint32_t));
  memcpy(target, kHeader, sizeof kHeader);
  size_t written = sizeof kHeader;
  written += deflate_fixed(data, len, finder, target + written);
  os::unmap(tables, table_bytes);
  put_le32(target + written, crc32(data, len));
  put_le32(target + written + 4, static_cast<uint32_t>(len));  // ISIZE: length mod 2^32
  out.commit(written + 8);
  return true;
}

}  // namespace heapscope::prof

#endif  // HS_PROFILER
