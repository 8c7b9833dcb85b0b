// The options table: one row per option (name, default, meaning). Each option is read from
// HEAPSCOPE_<NAME> (upper-cased) at start-up and can be changed with hs_option_set.
#include "core/options.h"

#include <atomic>

#include "core/purge_thread.h"
#include "core/stats.h"
#include "core/thread.h"
#include "platform/platform.h"

namespace heapscope {

namespace {

struct OptionRow {
  const char* name;
  long default_value;
  const char* meaning;
};

constexpr OptionRow kOptions[hs_option_count_] = {
    {"verbose", 0, "print warnings about misuse (foreign or invalid frees) to stderr"},
    {"show_stats", 0, "print allocator statistics to stderr at exit"},
    {"purge_delay", 10, "milliseconds before free memory is returned to the OS (-1: never)"},
    {"huge_cache_bytes", 64L << 20,
     "bytes of freed huge mappings kept for reuse, at least (up to half the huge bytes in use)"},
    {"check_frees", HS_DEBUG >= 1 ? 1 : 0, "abort on double, invalid or foreign frees"},
    {"purge_delay_max", 250,
     "ceiling (ms) the purge delay may grow to while purged memory keeps being reused"},
    {"dirty_max_bytes", 64L << 20,
     "free memory one thread keeps resident while it waits for the purge delay; beyond it, the "
     "oldest is purged at once"},
    {"fault_map_every", 0,
     "testing: every Nth request for OS memory fails as if the OS refused it (0: never)"},
    {"purge_thread", -1,
     "1: a background thread returns free memory to the OS on the purge delay while no thread "
     "calls the allocator; -1: it starts once exited pool threads leave memory worth holding "
     "for the next ones; 0: never (Linux; elsewhere ignored)"},
    {"transparent_huge_pages", 0,
     "0: segments never get transparent huge pages (where the system gives them to all memory, "
     "a 2 MiB page for each region a small heap touches multiplies its footprint); 1: as the "
     "system decides; 2: segments ask for them (fewer TLB misses on large heaps; Linux)"},
};

std::atomic<long> g_values[hs_option_count_] = {
    kOptions[0].default_value, kOptions[1].default_value, kOptions[2].default_value,
    kOptions[3].default_value, kOptions[4].default_value, kOptions[5].default_value,
    kOptions[6].default_value, kOptions[7].default_value, kOptions[8].default_value,
    kOptions[9].default_value,
};

// Parses a decimal integer with an optional sign, or yes/no words; false if malformed.
HS_HOT_TEXT bool parse_value(const char* text, long* out) {
  if (text[0] == 'y' || text[0] == 'Y' || text[0] == 't' || text[0] == 'T') {
    *out = 1;
    return true;
  }
  if (text[0] == 'n' || text[0] == 'N' || text[0] == 'f' || text[0] == 'F') {
    *out = 0;
    return true;
  }
  bool negative = *text == '-';
  if (negative) ++text;
  if (*text < '0' || *text > '9') return false;
  long value = 0;
  while (*text >= '0' && *text <= '9') value = value * 10 + (*text++ - '0');
  if (*text != '\0') return false;
  *out = negative ? -value : value;
  return true;
}

}  // namespace

HS_HOT_TEXT long option(hs_option_t which) {
  return g_values[which].load(std::memory_order_relaxed);
}

HS_HOT_TEXT void options_init() {
  for (int i = 0; i < hs_option_count_; ++i) {
    char env_name[64] = "HEAPSCOPE_";
    size_t len = 10;
    for (const char* s = kOptions[i].name; *s != '\0' && len + 1 < sizeof env_name; ++s) {
      env_name[len++] = (*s >= 'a' && *s <= 'z') ? static_cast<char>(*s - 'a' + 'A') : *s;
    }
    env_name[len] = '\0';
    const char* text = os::get_env(env_name);
    long value;
    if (text == nullptr) continue;
    if (parse_value(text, &value)) {
      g_values[i].store(value, std::memory_order_relaxed);
      if (i == hs_option_fault_map_every) os::set_map_fault_interval(value);
      if (i == hs_option_purge_thread && value > 0) purge_thread_request();
    } else {
      warning("heapscope: ignoring malformed option value in the environment", nullptr);
    }
  }
}

}  // namespace heapscope

extern "C" {

long hs_option_get(hs_option_t option) {
  if (option < 0 || option >= hs_option_count_) return 0;
  heapscope::process_init();
  return heapscope::g_values[option].load(std::memory_order_relaxed);
}

void hs_option_set(hs_option_t option, long value) {
  if (option < 0 || option >= hs_option_count_) return;
  heapscope::process_init();
  heapscope::g_values[option].store(value, std::memory_order_relaxed);
  if (option == hs_option_fault_map_every) heapscope::os::set_map_fault_interval(value);
  // The program's own call, outside the allocator: the thread can start at once.
  if (option == hs_option_purge_thread && value > 0) heapscope::purge_thread_start();
}

const char* hs_option_name(hs_option_t option) {
  if (option < 0 || option >= hs_option_count_) return nullptr;
  return heapscope::kOptions[option].name;
}

}  // extern "C"
