// The exit summary (see summary.h).
#include "events/events_hooks.h"  // defines HS_MEMORY_EVENTS
#if HS_MEMORY_EVENTS
#include <string.h>

#include "events/events_hooks.h"
#include "events/summary.h"
#include "events/tracking_state.h"
#include "platform/platform.h"
#include "support/format.h"
#include "support/notice.h"
#include "support/output_path.h"

namespace heapscope::events {
namespace {

char g_summary_pattern[kOutputPathMax];  // empty: no summary; expanded when written

// Appends to a fixed buffer; output past the end is dropped (the buffer is sized for the
// largest summary, so that does not happen in practice).
struct Out {
  char* buf;
  size_t cap;
  size_t len = 0;
  void put(const char* s) {
    while (*s != '\0') {
      if (len + 1 < cap) buf[len++] = *s;
      s++;
    }
  }
  void put_u64(uint64_t v) {
    char digits[fmt::kMaxDecimalDigits + 1];
    digits[fmt::decimal(v, digits)] = '\0';
    put(digits);
  }
  void field(const char* name, uint64_t v) {
    put("  \"");
    put(name);
    put("\": ");
    put_u64(v);
    put(",\n");
  }
};

// Expanded at exit, not at start-up, so a forked child names its own file; by the rule of
// output_path.h a second process of the tree never overwrites the first's summary.
__attribute__((destructor)) void write_summary_at_exit() {
  if (g_summary_pattern[0] == '\0') return;
  char path[kOutputPathMax];
  bool has_pid = false;
  if (!expand_output_path(g_summary_pattern, path, &has_pid)) return;
  summary_write(path, has_pid);
}

}  // namespace

void summary_init() {
  const char* pattern = os::get_env("HEAPSCOPE_MEMORY_SUMMARY");
  if (pattern == nullptr || pattern[0] == '\0') return;
  size_t len = strnlen(pattern, sizeof g_summary_pattern);
  if (len == sizeof g_summary_pattern) return;
  memcpy(g_summary_pattern, pattern, len + 1);
}

size_t summary_format(const hs_memory_snapshot_t& s, char* buf, size_t cap) {
  Out o{buf, cap};
  o.put("{\n");
  o.field("peak_live_bytes", s.peak_live_bytes);
  o.field("peak_time_ms", s.peak_time_ms);
  o.field("total_allocated_bytes", s.accum_bytes);
  o.field("total_allocation_calls", s.accum_count);
  o.field("short_lived_allocations", s.short_lived_count);
  o.field("live_bytes_at_exit", s.live_bytes);
  o.field("live_count_at_exit", s.live_count);
  // Buckets by bit length of the request: [min, max] bytes and the number of allocations.
  o.put("  \"size_histogram\": [");
  bool first = true;
  for (size_t i = 0; i < HS_MEMORY_HISTOGRAM_BUCKETS; i++) {
    if (s.size_histogram[i] == 0) continue;
    uint64_t min = i == 0 ? 0 : uint64_t{1} << (i - 1);
    uint64_t max = i == 0                                 ? 0
                   : i + 1 == HS_MEMORY_HISTOGRAM_BUCKETS ? UINT64_MAX
                                                          : (uint64_t{1} << i) - 1;
    o.put(first ? "\n    " : ",\n    ");
    first = false;
    o.put("{\"min\": ");
    o.put_u64(min);
    o.put(", \"max\": ");
    o.put_u64(max);
    o.put(", \"count\": ");
    o.put_u64(s.size_histogram[i]);
    o.put("}");
  }
  o.put(first ? "]\n}\n" : "\n  ]\n}\n");
  buf[o.len] = '\0';
  return o.len;
}

bool summary_write(const char* path, bool has_pid) {
  hs_memory_snapshot_t snapshot{};
  snapshot.size = sizeof snapshot;
  snapshot.version = HS_MEMORY_SNAPSHOT_VERSION;
  if (!tracking_snapshot(&snapshot)) return false;
  char buf[8192];
  size_t len = summary_format(snapshot, buf, sizeof buf);
  char chosen[kOutputPathMax];
  int fd = open_output_file(path, has_pid, chosen);
  if (fd < 0) {
    notice("cannot write the memory summary to ", path);
    return false;
  }
  bool ok = os::write_all(fd, buf, len);
  ok = os::close_fd(fd) && ok;
  if (ok) verbose_notice("memory summary at exit written to ", chosen);
  return ok;
}

}  // namespace heapscope::events

#endif  // HS_MEMORY_EVENTS
