#include "support/output_path.h"

#include <string.h>

#include "platform/platform.h"
#include "support/format.h"
#include "support/notice.h"

namespace heapscope {

namespace {

size_t pid_text(char* out) { return fmt::decimal(static_cast<uint64_t>(os::process_id()), out); }

// The executable's file name (after its last '/'), or "unknown".
const char* program_name(char* buffer, size_t capacity) {
  if (os::executable_path(buffer, capacity) == 0) return "unknown";
  const char* slash = strrchr(buffer, '/');
  return slash != nullptr ? slash + 1 : buffer;
}

bool append(char* out, size_t* len, const char* text, size_t n) {
  if (*len + n >= kOutputPathMax) return false;
  memcpy(out + *len, text, n);
  *len += n;
  return true;
}

}  // namespace

bool expand_output_path(const char* pattern, char* out, bool* has_pid) {
  *has_pid = false;
  size_t len = 0;
  bool warned = false;
  for (const char* s = pattern; *s != '\0'; ++s) {
    bool ok = true;
    if (*s != '%') {
      ok = append(out, &len, s, 1);
    } else if (s[1] == 'p') {
      char digits[fmt::kMaxDecimalDigits];
      ok = append(out, &len, digits, pid_text(digits));
      *has_pid = true;
      ++s;
    } else if (s[1] == 'e') {
      char exe[kOutputPathMax];
      const char* name = program_name(exe, sizeof exe);
      ok = append(out, &len, name, strlen(name));
      ++s;
    } else if (s[1] == '%') {
      ok = append(out, &len, "%", 1);
      ++s;
    } else {
      if (!warned)
        notice("unknown % escape in the output path \"", pattern,
               "\" (known: %p pid, %e program name, %%); kept as written");
      warned = true;
      ok = append(out, &len, s, 1);
    }
    if (!ok) return false;
  }
  out[len] = '\0';
  return true;
}

bool normalize_output_pattern(const char* pattern, char* out) {
  size_t len = 0;
  bool warned = false;
  for (const char* s = pattern; *s != '\0'; ++s) {
    bool known = *s == '%' && (s[1] == 'p' || s[1] == 'e' || s[1] == '%');
    bool ok = append(out, &len, s, known ? 2 : 1);
    if (known) {
      ++s;
    } else if (*s == '%') {
      if (!warned) {
        notice("unknown % escape in the output path \"", pattern,
               "\" (known: %p pid, %e program name, %%); kept as written");
      }
      warned = true;
      ok = ok && append(out, &len, "%", 1);
    }
    if (!ok) {
      notice("the output path is too long: ", pattern);
      return false;
    }
  }
  out[len] = '\0';
  return true;
}

int open_output_file(const char* path, bool has_pid, char* chosen) {
  size_t len = strlen(path);
  if (len >= kOutputPathMax) return -1;
  memcpy(chosen, path, len + 1);
  if (has_pid) return os::open_for_write(path);
  bool exists = false;
  int fd = os::open_exclusive(path, &exists);
  if (fd >= 0 || !exists) return fd;
  // Another process of the tree (or an earlier run) has the name: this one adds its pid.
  const char* slash = strrchr(path, '/');
  const char* name = slash != nullptr ? slash + 1 : path;
  const char* dot = name[0] != '\0' ? strchr(name + 1, '.') : nullptr;
  size_t stem = dot != nullptr ? static_cast<size_t>(dot - path) : len;
  char digits[fmt::kMaxDecimalDigits];
  size_t digits_len = pid_text(digits);
  if (len + 1 + digits_len >= kOutputPathMax) return -1;
  memcpy(chosen, path, stem);
  chosen[stem] = '.';
  memcpy(chosen + stem + 1, digits, digits_len);
  memcpy(chosen + stem + 1 + digits_len, path + stem, len - stem + 1);
  // The pid is unique among live processes: a file of that name is an earlier run's.
  return os::open_for_write(chosen);
}

}  // namespace heapscope
