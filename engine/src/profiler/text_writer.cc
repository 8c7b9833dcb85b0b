// The gperftools heap_v2 text format: what the perl google-pprof and
// go tool pprof both read. Counts are raw sampled counts and addresses raw return addresses;
// the readers unsample (from the header's heap_v2/<interval>) and subtract 1 themselves.
#include <inttypes.h>

#include "core/common.h"

#if HS_PROFILER

#include "profiler/modules.h"
#include "profiler/profile_writer.h"

namespace heapscope::prof {
namespace {

using ull = unsigned long long;

// The counts a line (and the header) carries. The alloc pair is written as 0 without
// accumulation: the reader then sees equal-to-zero totals and keeps only objects/space.
struct LineCounts {
  uint64_t live_objects;
  uint64_t live_bytes;
  uint64_t accum_objects;
  uint64_t accum_bytes;
  bool empty() const { return (live_objects | live_bytes | accum_objects | accum_bytes) == 0; }
};

LineCounts counts_of(const ProfileStack& stack, bool accum) {
  return {stack.live_objects, stack.live_bytes, accum ? stack.accum_objects : 0,
          accum ? stack.accum_bytes : 0};
}

// "%7llu: %llu" keeps a space after each colon: the perl reader's regexps require it.
bool append_counts(OsBuffer& out, const LineCounts& c) {
  return out.appendf("%7llu: %llu [%7llu: %llu] @", static_cast<ull>(c.live_objects),
                     static_cast<ull>(c.live_bytes), static_cast<ull>(c.accum_objects),
                     static_cast<ull>(c.accum_bytes));
}

bool append_header(const ProfileData& profile, OsBuffer& out) {
  LineCounts total{};
  for (size_t i = 0; i < profile.stack_count; ++i) {
    LineCounts c = counts_of(profile.stacks[i], profile.accum);
    total.live_objects += c.live_objects;
    total.live_bytes += c.live_bytes;
    total.accum_objects += c.accum_objects;
    total.accum_bytes += c.accum_bytes;
  }
  // Line 1, always: a reader that finds anything else first rejects the file.
  return out.append_str("heap profile: ") && append_counts(out, total) &&
         out.appendf(" heap_v2/%llu\n", static_cast<ull>(profile.sample_interval));
}

// Lowercase 0x hex only: go's parser misreads uppercase digits and drops the rest of the stack.
bool append_stack_lines(const ProfileData& profile, OsBuffer& out) {
  for (size_t i = 0; i < profile.stack_count; ++i) {
    const ProfileStack& stack = profile.stacks[i];
    LineCounts c = counts_of(stack, profile.accum);
    if (c.empty() || stack.depth == 0) continue;
    if (!append_counts(out, c)) return false;
    for (uint32_t f = 0; f < stack.depth; ++f) {
      if (!out.appendf(" 0x%llx", static_cast<ull>(stack.pcs[f]))) return false;
    }
    if (!out.append_char('\n')) return false;
  }
  return true;
}

// '#' lines are skipped by every reader; placed after the samples like Go's runtime.MemStats.
bool append_stats_block(const ProfileData& profile, OsBuffer& out) {
  const ProfileHeapStats& heap = profile.heap;
  const struct {
    const char* name;
    uint64_t value;
  } lines[] = {
      {"committed_bytes", heap.committed_bytes},
      {"reserved_bytes", heap.reserved_bytes},
      {"allocated_bytes", heap.allocated_bytes},
      {"requested_bytes", heap.requested_bytes},
      {"alloc_count", heap.alloc_count},
      {"free_count", heap.free_count},
      {"pages", heap.pages},
      {"heaps", heap.heaps},
      {"threads", heap.threads},
      {"purged_bytes", heap.purged_bytes},
      {"sample_interval", profile.sample_interval},
      {"profiler_dropped_samples", profile.dropped_samples},
      {"stack_table_overflows", profile.stack_table_overflows},
  };
  if (!out.append_str("# heapscope heap stats\n")) return false;
  for (const auto& line : lines) {
    if (!out.appendf("# %s = %llu\n", line.name, static_cast<ull>(line.value))) return false;
  }
  return true;
}

bool append_mapped_library(const ModuleSegment& segment, void* arg) {
  auto* out = static_cast<OsBuffer*>(arg);
  // PRIx64, not %lx: long is 32 bits on Windows (LLP64), where images load above 4 GiB.
  return out->appendf("%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64 " 00:00 0 %s\n",
                      static_cast<uint64_t>(segment.start),
                      static_cast<uint64_t>(segment.start + segment.size),
                      static_cast<uint64_t>(segment.file_offset), segment.path);
}

}  // namespace

bool write_text_profile(const ProfileData& profile, OsBuffer& out) {
  if (!append_header(profile, out) || !append_stack_lines(profile, out) ||
      !append_stats_block(profile, out) || !out.append_str("\nMAPPED_LIBRARIES:\n")) {
    return false;
  }
  for_each_module_segment(append_mapped_library, &out);
  return !out.failed();
}

}  // namespace heapscope::prof

#endif  // HS_PROFILER
