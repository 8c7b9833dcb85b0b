// profile.proto, hand-encoded: values already unsampled, addresses are
// return address - 1, one Mapping per executable segment with the main executable first, and
// optionally Function/Line filled from the modules' symbol tables. Nothing here calls malloc
// (except the demangler); gzip_append (gzip_writer) works on raw pages too.
//
// Layout written: sample_type x4, sample*, mapping*, location*, function*, string_table*,
// time_nanos, period_type, period, comment, default_sample_type.
#include "core/common.h"

#if HS_PROFILER

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"
#include "profiler/gzip_writer.h"
#include "profiler/modules.h"
#include "profiler/profile_writer.h"
#include "profiler/proto_encoder.h"
#include "profiler/symbolizer.h"

// The demangler is the program's C++ runtime's, when it has one loaded (function_for): a weak
// reference, so the engine itself needs no C++ runtime.
extern "C" __attribute__((weak)) char* __cxa_demangle(const char* mangled, char* buffer,
                                                      size_t* length, int* status);

namespace heapscope::prof {
namespace {

// profile.proto field numbers.
namespace field {
constexpr uint32_t kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5,
                   kStringTable = 6, kTimeNanos = 9, kPeriodType = 11, kPeriod = 12, kComment = 13,
                   kDefaultSampleType = 14;
constexpr uint32_t kValueTypeType = 1, kValueTypeUnit = 2;
constexpr uint32_t kSampleLocationId = 1, kSampleValue = 2, kSampleLabel = 3;
constexpr uint32_t kLabelKey = 1, kLabelNum = 3, kLabelNumUnit = 4;
constexpr uint32_t kMappingId = 1, kMappingStart = 2, kMappingLimit = 3, kMappingOffset = 4,
                   kMappingFilename = 5, kMappingBuildId = 6, kMappingHasFunctions = 7;
constexpr uint32_t kLocationId = 1, kLocationMappingId = 2, kLocationAddress = 3, kLocationLine = 4;
constexpr uint32_t kLineFunctionId = 1;
constexpr uint32_t kFunctionId = 1, kFunctionName = 2, kFunctionSystemName = 3;
}  // namespace field

struct Mapping {  // id = index + 1
  uint64_t start;
  uint64_t limit;
  uint64_t file_offset;
  uint64_t load_bias;
  uint64_t filename;  // string index
  uint64_t build_id;  // string index
  bool is_main;
  bool has_functions;
};

struct Location {        // id = index + 1
  uintptr_t pc;          // the raw return address
  uint32_t mapping_id;   // 0: inside no module
  uint32_t function_id;  // 0: not symbolized
};

struct Function {  // id = index + 1
  uint64_t name;
  uint64_t system_name;
};

struct LocationSlot {  // open-addressing map: return address -> location id
  uintptr_t pc;
  uint32_t id;  // 0 = empty
};

// Typed views of OsBuffers used as arrays (the memory is page aligned).
template <typename T>
T* items(OsBuffer& buffer) {
  return reinterpret_cast<T*>(buffer.data());
}
template <typename T>
size_t item_count(const OsBuffer& buffer) {
  return buffer.size() / sizeof(T);
}
template <typename T>
bool push(OsBuffer& buffer, const T& item) {
  return buffer.append(&item, sizeof item);
}
bool append_zeroed(OsBuffer& buffer, size_t bytes) {
  uint8_t* memory = buffer.reserve(bytes);
  if (memory == nullptr) return bytes == 0 && !buffer.failed();
  memset(memory, 0, bytes);
  buffer.commit(bytes);
  return true;
}

// To nearest, halves away from zero (llround without libm); negatives are 0.
int64_t rounded(double value) {
  if (!(value > 0)) return 0;
  if (value >= 0x1.0p63) return INT64_MAX;
  int64_t whole = static_cast<int64_t>(value);
  return value - static_cast<double>(whole) >= 0.5 ? whole + 1 : whole;  // exact difference
}

class ProtoBuilder {
 public:
  ProtoBuilder(const ProfileData& profile, const ProtoOptions& options)
      : profile_(profile), options_(options) {}

  // Encodes the whole message (uncompressed) into `out`.
  bool build(OsBuffer& out) {
    intern_fixed_strings();
    for_each_module_segment(&ProtoBuilder::add_mapping, this);
    if (mappings_.failed() || !init_location_map()) return false;
    if (!put_sample_types(out) || !put_samples(out)) return false;
    resolve_mappings();
    if (options_.symbolize && !symbolize_locations()) return false;
    if (!put_mappings(out) || !put_locations(out) || !put_functions(out)) return false;
    if (!put_trailer(out)) return false;
    return !strings_.failed() && !out.failed();
  }

 private:
  struct FixedStrings {
    uint64_t alloc_objects, alloc_space, inuse_objects, inuse_space, count, bytes, space, comment;
  };

  void intern_fixed_strings() {
    fixed_.alloc_objects = strings_.intern("alloc_objects");
    fixed_.count = strings_.intern("count");
    fixed_.alloc_space = strings_.intern("alloc_space");
    fixed_.bytes = strings_.intern("bytes");
    fixed_.inuse_objects = strings_.intern("inuse_objects");
    fixed_.inuse_space = strings_.intern("inuse_space");
    fixed_.space = strings_.intern("space");
    char comment[160];
    snprintf(comment, sizeof comment, "heapscope: dropped_samples=%llu stack_table_overflows=%llu",
             static_cast<unsigned long long>(profile_.dropped_samples),
             static_cast<unsigned long long>(profile_.stack_table_overflows));
    fixed_.comment = strings_.intern(comment);
  }

  static bool add_mapping(const ModuleSegment& segment, void* arg) {
    auto* self = static_cast<ProtoBuilder*>(arg);
    Mapping mapping{segment.start,
                    segment.start + segment.size,
                    segment.file_offset,
                    segment.load_bias,
                    self->strings_.intern(segment.path),
                    self->strings_.intern(segment.build_id),
                    segment.is_main,
                    false};
    return push(self->mappings_, mapping);
  }

  // Sized for every frame being distinct, at most half full: no rehashing.
  bool init_location_map() {
    size_t frames = 0;
    for (size_t i = 0; i < profile_.stack_count; ++i) frames += profile_.stacks[i].depth;
    slot_count_ = 64;
    while (slot_count_ < 2 * frames) slot_count_ *= 2;
    return append_zeroed(location_slots_, slot_count_ * sizeof(LocationSlot));
  }

  // The location id of return address `pc`, added on first sight (0 if out of memory).
  uint32_t location_id(uintptr_t pc) {
    LocationSlot* slots = items<LocationSlot>(location_slots_);
    size_t mask = slot_count_ - 1;
    size_t slot = static_cast<size_t>((pc * 0x9e3779b97f4a7c15ULL) >> 20) & mask;
    for (; slots[slot].id != 0; slot = (slot + 1) & mask) {
      if (slots[slot].pc == pc) return slots[slot].id;
    }
    if (!push(locations_, Location{pc, 0, 0})) return 0;
    slots[slot] = {pc, static_cast<uint32_t>(item_count<Location>(locations_))};
    return slots[slot].id;
  }

  bool put_value_type(OsBuffer& out, uint32_t field_number, uint64_t type, uint64_t unit) {
    scratch_.clear();
    return proto::put_uint64(scratch_, field::kValueTypeType, type) &&
           proto::put_uint64(scratch_, field::kValueTypeUnit, unit) &&
           proto::put_message(out, field_number, scratch_);
  }

  // Go runtime order: alloc_objects, alloc_space, inuse_objects, inuse_space.
  bool put_sample_types(OsBuffer& out) {
    return put_value_type(out, field::kSampleType, fixed_.alloc_objects, fixed_.count) &&
           put_value_type(out, field::kSampleType, fixed_.alloc_space, fixed_.bytes) &&
           put_value_type(out, field::kSampleType, fixed_.inuse_objects, fixed_.count) &&
           put_value_type(out, field::kSampleType, fixed_.inuse_space, fixed_.bytes);
  }

  // One Sample per stack with any count: the unsampled estimates, and a `bytes` label with
  // the average requested size (of the live samples, else of all samples, as the text
  // parser derives it), always with num_unit "bytes" so profiles diff against each other.
  bool put_samples(OsBuffer& out) {
    for (size_t i = 0; i < profile_.stack_count; ++i) {
      const ProfileStack& stack = profile_.stacks[i];
      bool accum = profile_.accum;
      uint64_t accum_objects = accum ? stack.accum_objects : 0;
      uint64_t accum_bytes = accum ? stack.accum_bytes : 0;
      if ((stack.live_objects | stack.live_bytes | accum_objects | accum_bytes) == 0) continue;
      if (stack.depth == 0) continue;

      location_ids_.clear();
      for (uint32_t f = 0; f < stack.depth; ++f) {
        uint64_t id = location_id(stack.pcs[f]);
        if (id == 0 || !push(location_ids_, id)) return false;
      }
      const uint64_t values[4] = {
          static_cast<uint64_t>(accum ? rounded(stack.accum_objects_estimate) : 0),
          static_cast<uint64_t>(accum ? rounded(stack.accum_bytes_estimate) : 0),
          static_cast<uint64_t>(rounded(stack.live_objects_estimate)),
          static_cast<uint64_t>(rounded(stack.live_bytes_estimate)),
      };
      uint64_t average_size = stack.live_objects != 0 ? stack.live_bytes / stack.live_objects
                              : accum_objects != 0    ? accum_bytes / accum_objects
                                                      : 0;
      label_.clear();
      scratch_.clear();
      bool ok = proto::put_uint64(label_, field::kLabelKey, fixed_.bytes) &&
                proto::put_uint64(label_, field::kLabelNum, average_size) &&
                proto::put_uint64(label_, field::kLabelNumUnit, fixed_.bytes) &&
                proto::put_packed(scratch_, field::kSampleLocationId,
                                  items<uint64_t>(location_ids_), stack.depth) &&
                proto::put_packed(scratch_, field::kSampleValue, values, 4) &&
                proto::put_message(scratch_, field::kSampleLabel, label_) &&
                proto::put_message(out, field::kSample, scratch_);
      if (!ok) return false;
    }
    return true;
  }

  // The mapping containing `address` (1-based id), 0 if none. Modules are few: a scan.
  uint32_t mapping_containing(uint64_t address) {
    const Mapping* mappings = items<Mapping>(mappings_);
    for (size_t m = 0; m < item_count<Mapping>(mappings_); ++m) {
      if (address >= mappings[m].start && address < mappings[m].limit) {
        return static_cast<uint32_t>(m + 1);
      }
    }
    return 0;
  }

  // The call instruction (pc - 1) decides: a return address can sit just past a module's end.
  void resolve_mappings() {
    Location* locations = items<Location>(locations_);
    for (size_t i = 0; i < item_count<Location>(locations_); ++i) {
      locations[i].mapping_id = mapping_containing(locations[i].pc - 1);
    }
  }

  bool symbolize_locations() {
    if (!symbolizer_.init(item_count<Mapping>(mappings_))) return false;
    for (size_t i = 0; i < item_count<Location>(locations_); ++i) {
      Location location = items<Location>(locations_)[i];
      if (location.mapping_id == 0) continue;
      Mapping& mapping = items<Mapping>(mappings_)[location.mapping_id - 1];
      // The running executable through the OS's own name for it (/proc/self/exe): right even if
      // its file was replaced.
      const char* self = mapping.is_main ? os::running_executable_file() : nullptr;
      const char* file = self != nullptr ? self : strings_.at(mapping.filename);
      FoundSymbol symbol;
      if (!symbolizer_.find(location.mapping_id - 1, file, strings_.at(mapping.build_id),
                            location.pc - 1 - mapping.load_bias, &symbol)) {
        continue;
      }
      uint32_t function_id = function_for(symbol);
      if (function_id == 0) return false;
      items<Location>(locations_)[i].function_id = function_id;
      mapping.has_functions = true;
    }
    return true;
  }

  // One Function per symbol: name demangled, system_name as in the symbol table.
  uint32_t function_for(const FoundSymbol& symbol) {
    size_t known = function_ids_.size() / sizeof(uint32_t);
    if (symbol.key >= known &&
        !append_zeroed(function_ids_, (symbolizer_.symbol_count() - known) * sizeof(uint32_t))) {
      return 0;
    }
    uint32_t& id = items<uint32_t>(function_ids_)[symbol.key];
    if (id != 0) return id;
    uint64_t system_name = strings_.intern(symbol.name);
    uint64_t name = system_name;
    if (symbol.name[0] == '_' && symbol.name[1] == 'Z') {
      // The one allocation of a dump: the caller runs us with sampling suppressed. A process
      // without a C++ runtime loaded gets the mangled names.
      if (DemangleFn demangle = demangler(); demangle != nullptr) {
        int status = 0;
        char* demangled = demangle(symbol.name, nullptr, nullptr, &status);
        if (demangled != nullptr && status == 0) name = strings_.intern(demangled);
        free(demangled);
      }
    }
    if (!push(functions_, Function{name, system_name})) return 0;
    id = static_cast<uint32_t>(item_count<Function>(functions_));
    return id;
  }

  bool put_mappings(OsBuffer& out) {
    const Mapping* mappings = items<Mapping>(mappings_);
    for (size_t m = 0; m < item_count<Mapping>(mappings_); ++m) {
      const Mapping& mapping = mappings[m];
      scratch_.clear();
      bool ok = proto::put_uint64(scratch_, field::kMappingId, m + 1) &&
                proto::put_uint64(scratch_, field::kMappingStart, mapping.start) &&
                proto::put_uint64(scratch_, field::kMappingLimit, mapping.limit) &&
                proto::put_uint64(scratch_, field::kMappingOffset, mapping.file_offset) &&
                proto::put_uint64(scratch_, field::kMappingFilename, mapping.filename) &&
                proto::put_uint64(scratch_, field::kMappingBuildId, mapping.build_id) &&
                proto::put_uint64(scratch_, field::kMappingHasFunctions, mapping.has_functions) &&
                proto::put_message(out, field::kMapping, scratch_);
      if (!ok) return false;
    }
    return true;
  }

  // address = return address - 1: the call instruction, which is what pprof expects in
  // a proto (it adjusts only legacy formats).
  bool put_locations(OsBuffer& out) {
    const Location* locations = items<Location>(locations_);
    for (size_t i = 0; i < item_count<Location>(locations_); ++i) {
      const Location& location = locations[i];
      uint64_t address = location.pc == 0 ? 0 : location.pc - 1;
      scratch_.clear();
      label_.clear();
      bool ok = proto::put_uint64(scratch_, field::kLocationId, i + 1) &&
                proto::put_uint64(scratch_, field::kLocationMappingId, location.mapping_id) &&
                proto::put_uint64(scratch_, field::kLocationAddress, address);
      if (ok && location.function_id != 0) {
        ok = proto::put_uint64(label_, field::kLineFunctionId, location.function_id) &&
             proto::put_message(scratch_, field::kLocationLine, label_);
      }
      if (!ok || !proto::put_message(out, field::kLocation, scratch_)) return false;
    }
    return true;
  }

  bool put_functions(OsBuffer& out) {
    const Function* functions = items<Function>(functions_);
    for (size_t i = 0; i < item_count<Function>(functions_); ++i) {
      scratch_.clear();
      bool ok = proto::put_uint64(scratch_, field::kFunctionId, i + 1) &&
                proto::put_uint64(scratch_, field::kFunctionName, functions[i].name) &&
                proto::put_uint64(scratch_, field::kFunctionSystemName, functions[i].system_name) &&
                proto::put_message(out, field::kFunction, scratch_);
      if (!ok) return false;
    }
    return true;
  }

  // Strings last (every index is known by now), then the scalar fields. time_nanos exactly
  // once: pprof reads a second one as "concatenated profiles".
  bool put_trailer(OsBuffer& out) {
    return strings_.encode(out, field::kStringTable) &&
           proto::put_int64(out, field::kTimeNanos, profile_.time_nanos) &&
           put_value_type(out, field::kPeriodType, fixed_.space, fixed_.bytes) &&
           proto::put_uint64(out, field::kPeriod, profile_.sample_interval) &&
           proto::put_uint64(out, field::kComment, fixed_.comment) &&
           proto::put_uint64(out, field::kDefaultSampleType, fixed_.inuse_space);
  }

  const ProfileData& profile_;
  const ProtoOptions& options_;
  StringTable strings_;
  FixedStrings fixed_{};
  OsBuffer mappings_;        // Mapping, module-segment order (main executable first)
  OsBuffer locations_;       // Location, id order
  OsBuffer location_slots_;  // LocationSlot[slot_count_]
  size_t slot_count_ = 0;
  OsBuffer functions_;     // Function, id order
  OsBuffer function_ids_;  // uint32_t per symbolizer key: its function id, 0 = none yet
  OsBuffer location_ids_;  // uint64_t: one sample's location ids
  OsBuffer scratch_;       // the submessage being encoded
  OsBuffer label_;         // a submessage nested in scratch_
  Symbolizer symbolizer_;

  // The weak reference if it was bound at load time, else a runtime loaded since (a C program
  // that loaded C++ code later), looked up once per dump.
  using DemangleFn = char* (*)(const char*, char*, size_t*, int*);
  DemangleFn demangler() {
    if (&__cxa_demangle != nullptr) return __cxa_demangle;
    if (!demangler_looked_up_) {
      demangler_looked_up_ = true;
      demangler_ = reinterpret_cast<DemangleFn>(os::cxx_runtime_definition("__cxa_demangle"));
    }
    return demangler_;
  }
  DemangleFn demangler_ = nullptr;
  bool demangler_looked_up_ = false;
};

}  // namespace

bool write_proto_profile(const ProfileData& profile, const ProtoOptions& options, OsBuffer& out) {
  ProtoBuilder builder(profile, options);
  if (!options.gzip) return builder.build(out);
  OsBuffer encoded;
  return builder.build(encoded) && gzip_append(encoded.data(), encoded.size(), out);
}

}  // namespace heapscope::prof

#endif  // HS_PROFILER
