// Dumps: the profile copied under the lock, formatted without it into raw pages, then written
// to a file or handed to the caller's writer in pieces. Also the dump at exit, whose path is
// a per-process pattern (support/output_path.h).
#include "profiler/dump.h"

#include <string.h>

#include "platform/platform.h"
#include "profiler/peak.h"
#include "profiler/prof_internal.h"
#include "profiler/profile_copy.h"
#include "profiler/profile_writer.h"
#include "support/notice.h"
#include "support/output_path.h"

namespace heapscope::prof {

namespace {

// The exit dump's path pattern ("" for none), set at start-up from the environment or by a
// start; expanded when the dump is written, so a forked child names its own file.
char g_exit_path[kOutputPathMax];
char g_peak_exit_path[kOutputPathMax];  // the peak profile's, "" for none
uint32_t g_exit_format = HS_PROF_FORMAT_TEXT;

}  // namespace

bool render_current(int format, OsBuffer& out) {
  if (!HS_PROFILER || format < HS_PROF_FORMAT_TEXT || format > HS_PROF_FORMAT_PROTO_SYMBOLIZED) {
    return false;
  }
  ProfileCopy copy;
  ProfileData profile;
  if (!take_copy(copy, profile)) return false;
  return render_profile(profile, format, out);
}

namespace {

// A path given in code: %p/%e/%% expanded like every profile path (a forked child that calls
// hs_prof_dump("heap.%p.txt") names its own file), then created or replaced as asked.
bool write_to_path(const char* pattern, const OsBuffer& data) {
  char path[kOutputPathMax];
  bool has_pid = false;
  if (!expand_output_path(pattern, path, &has_pid)) return false;
  int fd = os::open_for_write(path);
  if (fd < 0) return false;
  bool ok = os::write_all(fd, data.data(), data.size());
  return os::close_fd(fd) && ok;
}

}  // namespace

// Every profile a dump writes (now, the peak's, an interval's) is rendered here; the writers
// exist only when the profiler is compiled in.
bool render_profile(const ProfileData& profile, int format, OsBuffer& out) {
#if !HS_PROFILER
  (void)profile, (void)format, (void)out;
  return false;  // compiled out: there is no profile to write
#else
  if (format < HS_PROF_FORMAT_TEXT || format > HS_PROF_FORMAT_PROTO_SYMBOLIZED) return false;
  if (format == HS_PROF_FORMAT_TEXT) return write_text_profile(profile, out) && !out.failed();
  ProtoOptions options;
  options.symbolize = format == HS_PROF_FORMAT_PROTO_SYMBOLIZED;
  // The demangler allocates: never sample (or dead-lock on) what the dump itself allocates.
  t_suppress++;
  bool ok = write_proto_profile(profile, options, out) && !out.failed();
  t_suppress--;
  return ok;
#endif
}

bool write_profile_file(const char* pattern, const OsBuffer& data, const char* what,
                        const char* after_failure) {
  char expanded[kOutputPathMax];
  bool has_pid = false;
  if (!expand_output_path(pattern, expanded, &has_pid)) {
    notice("could not write the ", what, ": the path is too long: ", pattern, after_failure);
    return false;
  }
  char chosen[kOutputPathMax];
  int fd = open_output_file(expanded, has_pid, chosen);
  bool ok = fd >= 0 && os::write_all(fd, data.data(), data.size());
  if (fd >= 0) ok = os::close_fd(fd) && ok;
  if (!ok) {
    notice("could not write the ", what, " to ", chosen, after_failure);
    return false;
  }
  verbose_notice(what, " written to ", chosen);
  return true;
}

bool dump_to_path(const char* path, int format) {
  if (path == nullptr || t_suppress != 0 || t_lock_held != 0) return false;
  OsBuffer out;
  if (!render_current(format, out)) return false;  // nothing is created for a profile never built
  return write_to_path(path, out);
}

bool dump_to_writer(int format, hs_prof_write_fn sink, void* arg) {
  if (sink == nullptr || t_suppress != 0 || t_lock_held != 0) return false;
  OsBuffer out;
  if (!render_current(format, out)) return false;
  constexpr size_t kPiece = 64 * 1024;
  for (size_t offset = 0; offset < out.size(); offset += kPiece) {
    size_t len = out.size() - offset < kPiece ? out.size() - offset : kPiece;
    if (!sink(arg, out.data() + offset, len)) return false;
  }
  return true;
}

bool dump_peak_to_path(const char* path, int format) {
  if (path == nullptr || t_suppress != 0 || t_lock_held != 0) return false;
  OsBuffer out;
  if (!peak_render(format, out)) return false;
  return write_to_path(path, out);
}

bool exit_dump_path_fits(const char* path) {
  return path == nullptr || strlen(path) < sizeof g_exit_path;
}

HS_HOT_TEXT void set_exit_dump(const Settings& s) {
  if (s.exit_path_given) {
    if (s.exit_path == nullptr) {
      g_exit_path[0] = '\0';
    } else if (exit_dump_path_fits(s.exit_path)) {
      memcpy(g_exit_path, s.exit_path, strlen(s.exit_path) + 1);
    }
  }
  if (s.peak_path_given) {
    if (s.peak_path == nullptr || !exit_dump_path_fits(s.peak_path)) {
      g_peak_exit_path[0] = '\0';
    } else {
      memcpy(g_peak_exit_path, s.peak_path, strlen(s.peak_path) + 1);
    }
  }
  if (s.exit_format_given) g_exit_format = s.exit_format;
}

// Runs at normal exit (or unload): a profile of what is still allocated, even if the profiler
// never ran (an empty profile), whenever HEAPSCOPE_PROF_DUMP_AT_EXIT or the config asked.
__attribute__((destructor)) static void dump_at_exit() {
  if (t_suppress != 0 || t_lock_held != 0) return;
  int format = static_cast<int>(g_exit_format);
  if (g_exit_path[0] != '\0') {
    OsBuffer out;
    if (render_current(format, out)) {
      write_profile_file(g_exit_path, out, "heap profile at exit");
    } else {
      notice("could not build the heap profile at exit (out of memory)");
    }
  }
  if (g_peak_exit_path[0] != '\0') {
    OsBuffer out;
    if (peak_render(format, out)) {
      write_profile_file(g_peak_exit_path, out, "peak heap profile");
    } else {
      // Not an error: every process of a tree inherits the variable, and most sample nothing.
      verbose_notice("no peak heap profile at exit: nothing was sampled");
    }
  }
}

}  // namespace heapscope::prof

using namespace heapscope::prof;

extern "C" {

HS_API bool hs_prof_dump(const char* path) { return dump_to_path(path, HS_PROF_FORMAT_TEXT); }
HS_API bool hs_prof_dump_writer(hs_prof_write_fn write, void* arg) {
  return dump_to_writer(HS_PROF_FORMAT_TEXT, write, arg);
}
HS_API bool hs_prof_dump_proto(const char* path) {
  return dump_to_path(path, HS_PROF_FORMAT_PROTO);
}
HS_API bool hs_prof_dump_proto_writer(hs_prof_write_fn write, void* arg) {
  return dump_to_writer(HS_PROF_FORMAT_PROTO, write, arg);
}
HS_API bool hs_prof_dump_format(const char* path, int format) { return dump_to_path(path, format); }
HS_API bool hs_prof_dump_format_writer(int format, hs_prof_write_fn write, void* arg) {
  return dump_to_writer(format, write, arg);
}
HS_API bool hs_prof_dump_peak(const char* path, int format) {
  return dump_peak_to_path(path, format);
}

}  // extern "C"
