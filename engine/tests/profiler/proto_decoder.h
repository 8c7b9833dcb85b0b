// A tiny profile.proto decoder for the tests: just the fields the writer emits, strict about
// the wire format (any malformed byte fails the decode, as it would in pprof).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hs_test {

struct WireField {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t varint = 0;     // wire type 0
  std::string_view bytes;  // wire type 2
};

inline bool read_varint(std::string_view& data, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (data.empty()) return false;
    auto byte = static_cast<uint8_t>(data.front());
    data.remove_prefix(1);
    *value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

inline bool parse_fields(std::string_view data, std::vector<WireField>* fields) {
  while (!data.empty()) {
    uint64_t tag;
    if (!read_varint(data, &tag)) return false;
    WireField field;
    field.number = static_cast<uint32_t>(tag >> 3);
    field.wire_type = static_cast<uint32_t>(tag & 7);
    if (field.number == 0) return false;
    if (field.wire_type == 0) {
      if (!read_varint(data, &field.varint)) return false;
    } else if (field.wire_type == 2) {
      uint64_t len;
      if (!read_varint(data, &len) || len > data.size()) return false;
      field.bytes = data.substr(0, len);
      data.remove_prefix(len);
    } else {
      return false;  // the writer uses varints and length-delimited fields only
    }
    fields->push_back(field);
  }
  return true;
}

// A repeated scalar, packed or not.
inline bool append_repeated(const WireField& field, std::vector<uint64_t>* out) {
  if (field.wire_type == 0) {
    out->push_back(field.varint);
    return true;
  }
  std::string_view data = field.bytes;
  while (!data.empty()) {
    uint64_t value;
    if (!read_varint(data, &value)) return false;
    out->push_back(value);
  }
  return true;
}

struct DecodedProfile {
  struct ValueType {
    uint64_t type = 0, unit = 0;
  };
  struct Label {
    uint64_t key = 0, str = 0, num_unit = 0;
    int64_t num = 0;
  };
  struct Sample {
    std::vector<uint64_t> location_ids;
    std::vector<uint64_t> values;
    std::vector<Label> labels;
  };
  struct Mapping {
    uint64_t id = 0, start = 0, limit = 0, file_offset = 0, filename = 0, build_id = 0;
    bool has_functions = false;
  };
  struct Location {
    uint64_t id = 0, mapping_id = 0, address = 0;
    std::vector<uint64_t> function_ids;  // one per Line
  };
  struct Function {
    uint64_t id = 0, name = 0, system_name = 0;
  };

  std::vector<ValueType> sample_types;
  std::vector<Sample> samples;
  std::vector<Mapping> mappings;
  std::vector<Location> locations;
  std::vector<Function> functions;
  std::vector<std::string> strings;
  int time_nanos_count = 0;
  int64_t time_nanos = 0;
  ValueType period_type;
  int64_t period = 0;
  std::vector<uint64_t> comments;
  uint64_t default_sample_type = 0;

  const std::string& str(uint64_t index) const {
    static const std::string kBad = "<bad string index>";
    return index < strings.size() ? strings[index] : kBad;
  }
  const Location* location(uint64_t id) const {
    for (const Location& l : locations)
      if (l.id == id) return &l;
    return nullptr;
  }
  const Function* function(uint64_t id) const {
    for (const Function& f : functions)
      if (f.id == id) return &f;
    return nullptr;
  }
};

inline bool decode_value_type(std::string_view data, DecodedProfile::ValueType* out) {
  std::vector<WireField> fields;
  if (!parse_fields(data, &fields)) return false;
  for (const WireField& f : fields) {
    if (f.number == 1) out->type = f.varint;
    if (f.number == 2) out->unit = f.varint;
  }
  return true;
}

inline bool decode_profile(std::string_view data, DecodedProfile* out) {
  std::vector<WireField> top;
  if (!parse_fields(data, &top)) return false;
  for (const WireField& f : top) {
    std::vector<WireField> sub;
    switch (f.number) {
      case 1: {
        DecodedProfile::ValueType type;
        if (f.wire_type != 2 || !decode_value_type(f.bytes, &type)) return false;
        out->sample_types.push_back(type);
        break;
      }
      case 2: {
        DecodedProfile::Sample sample;
        if (f.wire_type != 2 || !parse_fields(f.bytes, &sub)) return false;
        for (const WireField& s : sub) {
          if (s.number == 1 && !append_repeated(s, &sample.location_ids)) return false;
          if (s.number == 2 && !append_repeated(s, &sample.values)) return false;
          if (s.number == 3) {
            std::vector<WireField> label_fields;
            if (!parse_fields(s.bytes, &label_fields)) return false;
            DecodedProfile::Label label;
            for (const WireField& l : label_fields) {
              if (l.number == 1) label.key = l.varint;
              if (l.number == 2) label.str = l.varint;
              if (l.number == 3) label.num = static_cast<int64_t>(l.varint);
              if (l.number == 4) label.num_unit = l.varint;
            }
            sample.labels.push_back(label);
          }
        }
        out->samples.push_back(std::move(sample));
        break;
      }
      case 3: {
        DecodedProfile::Mapping m;
        if (f.wire_type != 2 || !parse_fields(f.bytes, &sub)) return false;
        for (const WireField& s : sub) {
          if (s.number == 1) m.id = s.varint;
          if (s.number == 2) m.start = s.varint;
          if (s.number == 3) m.limit = s.varint;
          if (s.number == 4) m.file_offset = s.varint;
          if (s.number == 5) m.filename = s.varint;
          if (s.number == 6) m.build_id = s.varint;
          if (s.number == 7) m.has_functions = s.varint != 0;
        }
        out->mappings.push_back(m);
        break;
      }
      case 4: {
        DecodedProfile::Location l;
        if (f.wire_type != 2 || !parse_fields(f.bytes, &sub)) return false;
        for (const WireField& s : sub) {
          if (s.number == 1) l.id = s.varint;
          if (s.number == 2) l.mapping_id = s.varint;
          if (s.number == 3) l.address = s.varint;
          if (s.number == 4) {
            std::vector<WireField> line;
            if (!parse_fields(s.bytes, &line)) return false;
            for (const WireField& x : line)
              if (x.number == 1) l.function_ids.push_back(x.varint);
          }
        }
        out->locations.push_back(std::move(l));
        break;
      }
      case 5: {
        DecodedProfile::Function fn;
        if (f.wire_type != 2 || !parse_fields(f.bytes, &sub)) return false;
        for (const WireField& s : sub) {
          if (s.number == 1) fn.id = s.varint;
          if (s.number == 2) fn.name = s.varint;
          if (s.number == 3) fn.system_name = s.varint;
        }
        out->functions.push_back(fn);
        break;
      }
      case 6:
        if (f.wire_type != 2) return false;
        out->strings.emplace_back(f.bytes);
        break;
      case 9:
        ++out->time_nanos_count;
        out->time_nanos = static_cast<int64_t>(f.varint);
        break;
      case 11:
        if (f.wire_type != 2 || !decode_value_type(f.bytes, &out->period_type)) return false;
        break;
      case 12:
        out->period = static_cast<int64_t>(f.varint);
        break;
      case 13:
        if (!append_repeated(f, &out->comments)) return false;
        break;
      case 14:
        out->default_sample_type = f.varint;
        break;
      default:
        break;
    }
  }
  return true;
}

}  // namespace hs_test
