// The two pprof formats (gperftools heap_v2 text and gzipped profile.proto) and the module list
// they carry. Writers append to an OsBuffer and never call malloc, except the symbolizer's C++
// demangler (abi::__cxa_demangle), which the caller runs with sampling suppressed on its thread.
#pragma once

#include "heapscope/profile.h"
#include "profiler/os_buffer.h"
#include "profiler/profile_data.h"

namespace heapscope::prof {

// Text heap_v2: header line, raw counts, raw return addresses, '#' statistics block,
// MAPPED_LIBRARIES with one maps-style line per executable PT_LOAD segment.
bool write_text_profile(const ProfileData& profile, OsBuffer& out);

struct ProtoOptions {
  bool symbolize = false;  // fill Function/Line from the modules' ELF symbol tables, demangled
  bool gzip = true;        // gzip-compress the encoded message
};
// profile.proto: unsampled values, address - 1, main executable first as mapping[0].
bool write_proto_profile(const ProfileData& profile, const ProtoOptions& options, OsBuffer& out);

// Visits the executable PT_LOAD segments of every loaded module, main executable first.
bool visit_modules(hs_prof_module_visit_fn visit, void* arg);

}  // namespace heapscope::prof
