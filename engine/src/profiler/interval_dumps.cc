#include "profiler/interval_dumps.h"

#include <string.h>

#include "platform/platform.h"
#include "profiler/dump.h"
#include "profiler/prof_internal.h"
#include "support/format.h"
#include "support/notice.h"
#include "support/output_path.h"

namespace heapscope::prof {

namespace {

constexpr uint64_t kDefaultMaxFiles = 100;

struct IntervalDumps {
  char prefix[kOutputPathMax] = {};
  uint64_t alloc_interval = 0, inuse_interval = 0, time_interval_secs = 0, max_files = 0;
  uint32_t format = 0;
  std::atomic<bool> on{false};
  std::atomic<uint32_t> busy{0};  // one thread checks (and writes) at a time
  // Guarded by busy:
  double next_alloc = 0;
  double last_inuse = 0;
  int64_t next_ms = 0;
  uint64_t written = 0;
};
// Configured inside the first malloc, before any constructor of this library runs: it must be
// constant-initialized, never re-initialized afterwards.
constinit IntervalDumps g_dumps;

bool write_next() {
  if (g_dumps.written == g_dumps.max_files) {
    char shown[kOutputPathMax];
    bool has_pid = false;
    if (!expand_output_path(g_dumps.prefix, shown, &has_pid)) shown[0] = '\0';
    notice("HEAPSCOPE_PROF_DUMP_MAX_FILES reached: no more profiles under ", shown);
    g_dumps.written++;  // said once
    return false;
  }
  if (g_dumps.written > g_dumps.max_files) return false;
  char pattern[kOutputPathMax];
  size_t len = strlen(g_dumps.prefix);
  const char* extension = g_dumps.format == HS_PROF_FORMAT_TEXT ? ".heap" : ".pb.gz";
  if (len + 2 + fmt::kMaxDecimalDigits + strlen(extension) >= sizeof pattern) return false;
  memcpy(pattern, g_dumps.prefix, len);
  pattern[len++] = '.';
  len += fmt::decimal(++g_dumps.written, pattern + len, 4);
  memcpy(pattern + len, extension, strlen(extension) + 1);
  OsBuffer out;
  if (!render_current(static_cast<int>(g_dumps.format), out)) return false;
  if (write_profile_file(pattern, out, "interval heap profile", "; no more will be written")) {
    return true;
  }
  // A missing directory or a full disk does not mend itself: one line, not one per interval.
  g_dumps.on.store(false, std::memory_order_relaxed);
  return false;
}

// Whether any interval variable is set: a malformed one has had its line from config.cc, and
// one set to 0 asked for no profiles.
HS_HOT_TEXT bool interval_variable_set() {
  return os::get_env("HEAPSCOPE_PROF_DUMP_ALLOC_INTERVAL") != nullptr ||
         os::get_env("HEAPSCOPE_PROF_DUMP_INUSE_INTERVAL") != nullptr ||
         os::get_env("HEAPSCOPE_PROF_DUMP_TIME_INTERVAL") != nullptr;
}

}  // namespace

HS_HOT_TEXT void interval_dumps_configure(const Settings& s) {
  if (s.prefix == nullptr || s.prefix[0] == '\0') return;
  if (!normalize_output_pattern(s.prefix, g_dumps.prefix)) return;  // said why
  g_dumps.alloc_interval = s.dump_alloc_interval;
  g_dumps.inuse_interval = s.dump_inuse_interval;
  g_dumps.time_interval_secs = s.dump_time_interval;
  g_dumps.max_files = s.dump_max_files_given ? s.dump_max_files : kDefaultMaxFiles;
  g_dumps.format = s.exit_format;
  if (g_dumps.alloc_interval == 0 && g_dumps.inuse_interval == 0 &&
      g_dumps.time_interval_secs == 0) {
    if (interval_variable_set()) return;
    notice(
        "HEAPSCOPE_PROF_DUMP_PREFIX without a HEAPSCOPE_PROF_DUMP_*_INTERVAL: no interval "
        "profiles");
    return;
  }
  g_dumps.next_alloc = static_cast<double>(g_dumps.alloc_interval);
  g_dumps.last_inuse = 0;
  g_dumps.next_ms = os::now_ms() + static_cast<int64_t>(g_dumps.time_interval_secs) * 1000;
  g_dumps.on.store(true, std::memory_order_release);
}

void interval_dumps_check() {
  if (!g_dumps.on.load(std::memory_order_acquire) || t_suppress != 0 || t_lock_held != 0) return;
  if (g_dumps.busy.exchange(1, std::memory_order_acquire) != 0) return;
  double allocated, inuse;
  {
    LockGuard lock;
    allocated = g_session.allocated_bytes_estimate;
    inuse = g_session.live_bytes_estimate;
  }
  bool due = false;
  if (g_dumps.alloc_interval != 0 && allocated >= g_dumps.next_alloc) {
    due = true;
    g_dumps.next_alloc = allocated + static_cast<double>(g_dumps.alloc_interval);
  }
  if (g_dumps.inuse_interval != 0 &&
      inuse >= g_dumps.last_inuse + static_cast<double>(g_dumps.inuse_interval)) {
    due = true;
  }
  int64_t now = g_dumps.time_interval_secs != 0 ? os::now_ms() : 0;
  if (g_dumps.time_interval_secs != 0 && now >= g_dumps.next_ms) {
    due = true;
    g_dumps.next_ms = now + static_cast<int64_t>(g_dumps.time_interval_secs) * 1000;
  }
  // In-use growth is measured from the last dump, whatever triggered it.
  if (due) {
    g_dumps.last_inuse = inuse;
    write_next();
  }
  g_dumps.busy.store(0, std::memory_order_release);
}

}  // namespace heapscope::prof
