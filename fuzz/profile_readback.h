// Reading back what the profiler dumps, for the profiler fuzz target: the heap_v2 text format
// (header and per-stack lines) and profile.proto (gzip, then the protobuf wire format, decoded
// just far enough to check its structure). Written here rather than reusing
// engine/tests/profiler/proto_decoder.h because the engine's tests stay inside the engine (the
// layer rule, ci/check-layers.py); this one also reports why a profile is malformed.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heapscope::fuzz {

// gzip -d, or "" when `compressed` is not one whole gzip stream.
inline std::string gunzip(std::string_view compressed) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return {};
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  char chunk[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - stream.avail_out);
  }
  inflateEnd(&stream);
  return rc == Z_STREAM_END && stream.avail_in == 0 ? out : std::string();
}

// ---- heap_v2 text ---------------------------------------------------------------------------

struct TextCounts {
  uint64_t live_objects = 0, live_bytes = 0, accum_objects = 0, accum_bytes = 0;
};

struct TextProfile {
  TextCounts header;      // "heap profile: a: b [c: d] @ heap_v2/N"
  uint64_t interval = 0;  // N
  TextCounts line_sum;    // the per-stack lines added up
  size_t stack_lines = 0;
  bool has_mapped_libraries = false;
};

namespace text_detail {

inline void skip_spaces(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
}

inline bool take_literal(std::string_view& s, std::string_view literal) {
  if (s.substr(0, literal.size()) != literal) return false;
  s.remove_prefix(literal.size());
  return true;
}

inline bool take_number(std::string_view& s, uint64_t* value, int base = 10) {
  size_t n = 0;
  *value = 0;
  for (; n < s.size(); ++n) {
    const char c = s[n];
    unsigned digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else {
      break;
    }
    *value = *value * static_cast<uint64_t>(base) + digit;
  }
  s.remove_prefix(n);
  return n > 0;
}

// "%7llu: %llu [%7llu: %llu] @"
inline bool take_counts(std::string_view& s, TextCounts* c) {
  skip_spaces(s);
  if (!take_number(s, &c->live_objects) || !take_literal(s, ": ") ||
      !take_number(s, &c->live_bytes) || !take_literal(s, " [")) {
    return false;
  }
  skip_spaces(s);
  return take_number(s, &c->accum_objects) && take_literal(s, ": ") &&
         take_number(s, &c->accum_bytes) && take_literal(s, "] @");
}

}  // namespace text_detail

// Parses a text profile; on failure returns false and says why in `why`.
inline bool parse_text_profile(std::string_view text, TextProfile* out, std::string* why) {
  using namespace text_detail;
  auto line_of = [&text]() {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    return line;
  };
  std::string_view header = line_of();
  if (!take_literal(header, "heap profile: ") || !take_counts(header, &out->header) ||
      !take_literal(header, " heap_v2/") || !take_number(header, &out->interval) ||
      !header.empty()) {
    *why = "bad header line";
    return false;
  }
  while (!text.empty()) {
    std::string_view line = line_of();
    if (line.empty() || line.front() == '#') continue;
    if (line == "MAPPED_LIBRARIES:") {
      out->has_mapped_libraries = true;
      break;  // /proc/self/maps-style lines follow; pprof reads them, we do not
    }
    TextCounts c;
    if (!take_counts(line, &c)) {
      *why = "bad stack line";
      return false;
    }
    size_t frames = 0;
    while (!line.empty()) {
      uint64_t pc;
      if (!take_literal(line, " 0x") || !take_number(line, &pc, 16)) {
        *why = "bad frame on a stack line";
        return false;
      }
      ++frames;
    }
    if (frames == 0) {
      *why = "a stack line without frames";
      return false;
    }
    out->line_sum.live_objects += c.live_objects;
    out->line_sum.live_bytes += c.live_bytes;
    out->line_sum.accum_objects += c.accum_objects;
    out->line_sum.accum_bytes += c.accum_bytes;
    ++out->stack_lines;
  }
  if (!out->has_mapped_libraries) {
    *why = "no MAPPED_LIBRARIES section";
    return false;
  }
  return true;
}

// ---- profile.proto --------------------------------------------------------------------------

struct ProtoProfile {
  struct Sample {
    std::vector<uint64_t> location_ids;
    std::vector<uint64_t> values;
  };
  struct Location {
    uint64_t id = 0, mapping_id = 0;
    std::vector<uint64_t> function_ids;
  };
  struct Function {
    uint64_t id = 0, name = 0;
  };
  std::vector<std::pair<uint64_t, uint64_t>> sample_types;  // (type, unit) string indexes
  std::vector<Sample> samples;
  std::vector<uint64_t> mapping_ids;
  std::vector<Location> locations;
  std::vector<Function> functions;
  std::vector<std::string> strings;
};

namespace proto_detail {

struct Field {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};

inline bool read_varint(std::string_view& data, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (data.empty()) return false;
    const auto byte = static_cast<uint8_t>(data.front());
    data.remove_prefix(1);
    *value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// The profiler writes only varints (0) and length-delimited fields (2); anything else is an error.
inline bool next_field(std::string_view& data, Field* f) {
  uint64_t tag;
  if (!read_varint(data, &tag)) return false;
  f->number = static_cast<uint32_t>(tag >> 3);
  f->wire_type = static_cast<uint32_t>(tag & 7);
  if (f->number == 0) return false;
  if (f->wire_type == 0) return read_varint(data, &f->varint);
  if (f->wire_type != 2) return false;
  uint64_t len;
  if (!read_varint(data, &len) || len > data.size()) return false;
  f->bytes = data.substr(0, len);
  data.remove_prefix(len);
  return true;
}

// A repeated integer, packed (wire type 2) or not.
inline bool append_repeated(const Field& f, std::vector<uint64_t>* out) {
  if (f.wire_type == 0) {
    out->push_back(f.varint);
    return true;
  }
  std::string_view data = f.bytes;
  while (!data.empty()) {
    uint64_t v;
    if (!read_varint(data, &v)) return false;
    out->push_back(v);
  }
  return true;
}

// Calls on_field for each field of a message; false on malformed bytes or when on_field fails.
template <class OnField>
bool for_each_field(std::string_view message, OnField on_field) {
  while (!message.empty()) {
    Field f;
    if (!next_field(message, &f) || !on_field(f)) return false;
  }
  return true;
}

}  // namespace proto_detail

// Decodes the fields of profile.proto the checks need (field numbers from pprof's profile.proto).
inline bool decode_proto_profile(std::string_view data, ProtoProfile* out) {
  using namespace proto_detail;
  return for_each_field(data, [out](const Field& f) {
    if (f.number >= 1 && f.number <= 6 && f.wire_type != 2) return false;
    switch (f.number) {
      case 1: {  // sample_type: ValueType{type = 1, unit = 2}
        std::pair<uint64_t, uint64_t> type{};
        out->sample_types.push_back(type);
        return for_each_field(f.bytes, [out](const Field& v) {
          if (v.number == 1) out->sample_types.back().first = v.varint;
          if (v.number == 2) out->sample_types.back().second = v.varint;
          return true;
        });
      }
      case 2: {  // sample: location_id = 1, value = 2
        out->samples.emplace_back();
        ProtoProfile::Sample& s = out->samples.back();
        return for_each_field(f.bytes, [&s](const Field& v) {
          if (v.number == 1) return append_repeated(v, &s.location_ids);
          if (v.number == 2) return append_repeated(v, &s.values);
          return true;
        });
      }
      case 3:  // mapping: id = 1
        out->mapping_ids.push_back(0);
        return for_each_field(f.bytes, [out](const Field& v) {
          if (v.number == 1) out->mapping_ids.back() = v.varint;
          return true;
        });
      case 4: {  // location: id = 1, mapping_id = 2, line = 4 (Line{function_id = 1})
        out->locations.emplace_back();
        ProtoProfile::Location& l = out->locations.back();
        return for_each_field(f.bytes, [&l](const Field& v) {
          if (v.number == 1) l.id = v.varint;
          if (v.number == 2) l.mapping_id = v.varint;
          if (v.number == 4) {
            return v.wire_type == 2 && for_each_field(v.bytes, [&l](const Field& line) {
                     if (line.number == 1) l.function_ids.push_back(line.varint);
                     return true;
                   });
          }
          return true;
        });
      }
      case 5:  // function: id = 1, name = 2
        out->functions.emplace_back();
        return for_each_field(f.bytes, [out](const Field& v) {
          if (v.number == 1) out->functions.back().id = v.varint;
          if (v.number == 2) out->functions.back().name = v.varint;
          return true;
        });
      case 6:  // string_table
        out->strings.emplace_back(f.bytes);
        return true;
      default:
        return true;
    }
  });
}

}  // namespace heapscope::fuzz
