// The option table: every session setting once, with its environment variable, how the
// variable is parsed, and how the struct's and the environment's value land in Settings.
// The environment is parsed without allocating (start-up runs inside the first malloc).
#include "profiler/config.h"

#include <atomic>

#include "core/common.h"
#include "platform/platform.h"
#include "support/notice.h"

namespace heapscope::prof {

namespace {

// True the first time a variable is complained about: the environment is read at start-up and
// again by every start, and a bad value deserves one line, not one per start.
bool first_complaint(const char* variable) {
  static std::atomic<const char*> complained[16];
  for (auto& slot : complained) {
    const char* seen = slot.load(std::memory_order_relaxed);
    if (seen == variable) return false;
    if (seen == nullptr && slot.compare_exchange_strong(seen, variable)) return true;
    if (seen == variable) return false;
  }
  return false;
}

// Decimal digits only (bytes, no suffixes); false if absent or malformed (said once on stderr).
HS_HOT_TEXT bool env_u64(const char* name, uint64_t* out) {
  const char* text = os::get_env(name);
  if (text == nullptr || *text == '\0') return false;
  uint64_t value = 0;
  for (const char* s = text; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9' || value > (UINT64_MAX - 9) / 10) {
      if (first_complaint(name)) notice(name, "=", text, " is not a decimal number; ignored");
      return false;
    }
    value = value * 10 + static_cast<uint64_t>(*s - '0');
  }
  *out = value;
  return true;
}

// Set and empty, or starting with 1/y/t/on (any case), is true; anything else set is false.
HS_HOT_TEXT bool env_bool(const char* name, bool* out) {
  const char* text = os::get_env(name);
  if (text == nullptr) return false;
  char c = text[0];
  *out = c == '1' || c == 'y' || c == 'Y' || c == 't' || c == 'T' || c == '\0' ||
         ((c == 'o' || c == 'O') && (text[1] == 'n' || text[1] == 'N'));
  return true;
}

bool equals_ignoring_case(const char* a, const char* b) {
  for (; *a != '\0' && *b != '\0'; ++a, ++b) {
    char x = (*a >= 'A' && *a <= 'Z') ? static_cast<char>(*a + 32) : *a;
    if (x != *b) return false;
  }
  return *a == *b;
}

bool env_format(const char* name, uint64_t* out) {
  const char* text = os::get_env(name);
  if (text == nullptr || *text == '\0') return false;
  if (equals_ignoring_case(text, "text") || equals_ignoring_case(text, "heap")) {
    *out = HS_PROF_FORMAT_TEXT;
  } else if (equals_ignoring_case(text, "proto") || equals_ignoring_case(text, "pb")) {
    *out = HS_PROF_FORMAT_PROTO;
  } else if (equals_ignoring_case(text, "proto-symbolized") ||
             equals_ignoring_case(text, "symbolized")) {
    *out = HS_PROF_FORMAT_PROTO_SYMBOLIZED;
  } else {
    if (first_complaint(name)) {
      notice(name, "=", text, " is not text, proto or proto-symbolized; ignored");
    }
    return false;
  }
  return true;
}

// One variable's value as read: `given` when it is set (and valid).
struct EnvValue {
  bool given;
  uint64_t number;
  bool flag;
  const char* text;
};

enum class Parse { kPositive, kNumber, kFlag, kPath, kFormat };

struct Option {
  uint32_t field;        // HS_PROF_FIELD_* bit
  const char* variable;  // HEAPSCOPE_PROF_* name
  Parse parse;
  // Takes the struct's value; false when it is invalid (the start fails).
  bool (*from_config)(const hs_prof_config_t& config, Settings& s);
  void (*from_env)(const EnvValue& value, Settings& s);
};

// In the order the variables are read (and any warnings printed).
constexpr Option kOptions[] = {
    {HS_PROF_FIELD_SAMPLE_INTERVAL, "HEAPSCOPE_PROF_SAMPLE_INTERVAL", Parse::kPositive,
     [](const hs_prof_config_t& c, Settings& s) {
       s.interval = c.sample_interval;
       return c.sample_interval != 0;
     },
     [](const EnvValue& v, Settings& s) { s.interval = v.number; }},
    {HS_PROF_FIELD_MAX_BYTES, "HEAPSCOPE_PROF_MAX_BYTES", Parse::kNumber,
     [](const hs_prof_config_t& c, Settings& s) {
       s.max_bytes = c.max_bytes;
       return true;
     },
     [](const EnvValue& v, Settings& s) { s.max_bytes = v.number; }},
    {HS_PROF_FIELD_SEED, "HEAPSCOPE_PROF_SEED", Parse::kNumber,
     [](const hs_prof_config_t& c, Settings& s) {
       s.seed = c.seed;
       return true;
     },
     [](const EnvValue& v, Settings& s) { s.seed = v.number; }},
    {HS_PROF_FIELD_ACCUM, "HEAPSCOPE_PROF_ACCUM", Parse::kFlag,
     [](const hs_prof_config_t& c, Settings& s) {
       s.accum = c.accum != 0;
       return true;
     },
     [](const EnvValue& v, Settings& s) {
       s.accum = v.flag;
       s.accum_given = true;
     }},
    {HS_PROF_FIELD_STACK_DEPTH, "HEAPSCOPE_PROF_BT_MAX", Parse::kPositive,
     [](const hs_prof_config_t& c, Settings& s) {
       s.depth = clamp_depth(c.max_stack_depth);
       return c.max_stack_depth != 0;
     },
     [](const EnvValue& v, Settings& s) { s.depth = clamp_depth(v.number); }},
    {HS_PROF_FIELD_DUMP_AT_EXIT, "HEAPSCOPE_PROF_DUMP_AT_EXIT", Parse::kPath,
     [](const hs_prof_config_t& c, Settings& s) {
       s.exit_path_given = true;
       s.exit_path = c.dump_at_exit;
       return true;
     },
     [](const EnvValue& v, Settings& s) {
       s.exit_path_given = true;
       s.exit_path = v.text;
     }},
    // Environment only (no config field): the peak profile at exit.
    {0, "HEAPSCOPE_PROF_DUMP_PEAK_AT_EXIT", Parse::kPath,
     [](const hs_prof_config_t&, Settings&) { return true; },
     [](const EnvValue& v, Settings& s) {
       s.peak_path_given = true;
       s.peak_path = v.text;
     }},
    // Environment only: numbered profiles over time.
    {0, "HEAPSCOPE_PROF_DUMP_PREFIX", Parse::kPath,
     [](const hs_prof_config_t&, Settings&) { return true; },
     [](const EnvValue& v, Settings& s) { s.prefix = v.text; }},
    {0, "HEAPSCOPE_PROF_DUMP_ALLOC_INTERVAL", Parse::kNumber,
     [](const hs_prof_config_t&, Settings&) { return true; },
     [](const EnvValue& v, Settings& s) { s.dump_alloc_interval = v.number; }},
    {0, "HEAPSCOPE_PROF_DUMP_INUSE_INTERVAL", Parse::kNumber,
     [](const hs_prof_config_t&, Settings&) { return true; },
     [](const EnvValue& v, Settings& s) { s.dump_inuse_interval = v.number; }},
    {0, "HEAPSCOPE_PROF_DUMP_TIME_INTERVAL", Parse::kNumber,
     [](const hs_prof_config_t&, Settings&) { return true; },
     [](const EnvValue& v, Settings& s) { s.dump_time_interval = v.number; }},
    {0, "HEAPSCOPE_PROF_DUMP_MAX_FILES", Parse::kNumber,
     [](const hs_prof_config_t&, Settings&) { return true; },
     [](const EnvValue& v, Settings& s) {
       s.dump_max_files_given = true;
       s.dump_max_files = v.number;
     }},
    {HS_PROF_FIELD_DUMP_FORMAT, "HEAPSCOPE_PROF_DUMP_FORMAT", Parse::kFormat,
     [](const hs_prof_config_t& c, Settings& s) {
       s.exit_format_given = true;
       s.exit_format = c.dump_format;
       return c.dump_format <= HS_PROF_FORMAT_PROTO_SYMBOLIZED;
     },
     [](const EnvValue& v, Settings& s) {
       s.exit_format_given = true;
       s.exit_format = static_cast<uint32_t>(v.number);
     }},
};
constexpr size_t kOptionCount = sizeof kOptions / sizeof kOptions[0];

HS_HOT_TEXT EnvValue read_option(const Option& option) {
  EnvValue v{};
  switch (option.parse) {
    case Parse::kPositive:
      v.given = env_u64(option.variable, &v.number) && v.number > 0;
      break;
    case Parse::kNumber:
      v.given = env_u64(option.variable, &v.number);
      break;
    case Parse::kFlag:
      v.given = env_bool(option.variable, &v.flag);
      break;
    case Parse::kPath:
      v.text = os::get_env(option.variable);
      v.given = v.text != nullptr;
      break;
    case Parse::kFormat:
      v.given = env_format(option.variable, &v.number);
      break;
  }
  return v;
}

// Every variable is read (and warned about) before any field is resolved.
HS_HOT_TEXT void read_environment(EnvValue (&values)[kOptionCount]) {
  for (size_t i = 0; i < kOptionCount; ++i) values[i] = read_option(kOptions[i]);
}

}  // namespace

uint32_t clamp_depth(uint64_t depth) {
  if (depth == 0) return HS_PROF_DEFAULT_STACK_DEPTH;
  return depth > HS_PROF_MAX_STACK_DEPTH ? HS_PROF_MAX_STACK_DEPTH : static_cast<uint32_t>(depth);
}

HS_HOT_TEXT Settings settings_from_environment() {
  EnvValue env[kOptionCount];
  read_environment(env);
  Settings s;
  for (size_t i = 0; i < kOptionCount; ++i) {
    if (env[i].given) kOptions[i].from_env(env[i], s);
  }
  return s;
}

Settings settings_for_start(uint64_t interval) {
  Settings s = settings_from_environment();
  if (interval != 0) s.interval = interval;  // an explicit interval ignores the environment
  s.exit_path_given = false;                 // the exit dump settings were read at start-up
  s.peak_path_given = false;
  s.exit_format_given = false;
  return s;
}

bool settings_from_config(const hs_prof_config_t& config, Settings* out) {
  EnvValue env[kOptionCount];
  read_environment(env);
  Settings s;
  for (size_t i = 0; i < kOptionCount; ++i) {
    const Option& option = kOptions[i];
    bool given = (config.fields & option.field) != 0;
    bool override = config.mode == HS_PROF_OVERRIDE || (config.override_fields & option.field) != 0;
    if (given && (override || !env[i].given)) {
      if (!option.from_config(config, s)) return false;
    } else if (env[i].given) {
      option.from_env(env[i], s);
    }
  }
  *out = s;
  return true;
}

HS_HOT_TEXT bool environment_requests_profiling() {
  bool on = false;
  return env_bool("HEAPSCOPE_PROF", &on) && on;
}

}  // namespace heapscope::prof
