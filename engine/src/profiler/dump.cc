// Dumps: the profile copied under the lock, formatted without it into raw pages, then written
// to a file or handed to the caller's writer in pieces. Also the dump at exit.
#include "profiler/dump.h"

#include <string.h>

#include "platform/platform.h"
#include "profiler/prof_internal.h"
#include "profiler/profile_copy.h"
#include "profiler/profile_writer.h"

namespace heapscope::prof {

namespace {

// The exit dump's target ("" for none), set at start-up from the environment or by a start.
char g_exit_path[4096];
uint32_t g_exit_format = HS_PROF_FORMAT_TEXT;

// Builds the whole profile in `out` (no lock held while formatting).
bool render(int format, OsBuffer& out) {
#if !HS_PROFILER
  (void)out;
  (void)format;
  return false;  // compiled out: there is no profile to write
#else
  if (format < HS_PROF_FORMAT_TEXT || format > HS_PROF_FORMAT_PROTO_SYMBOLIZED) return false;
  ProfileCopy copy;
  ProfileData profile;
  if (!take_copy(copy, profile)) return false;
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

bool write_to_path(const char* path, const OsBuffer& data) {
  int fd = os::open_for_write(path);
  if (fd < 0) return false;
  bool ok = os::write_all(fd, data.data(), data.size());
  return os::close_fd(fd) && ok;
}

}  // namespace

bool dump_to_path(const char* path, int format) {
  if (path == nullptr || t_suppress != 0 || t_lock_held != 0) return false;
  OsBuffer out;
  if (!render(format, out)) return false;  // nothing is created for a profile never built
  return write_to_path(path, out);
}

bool dump_to_writer(int format, hs_prof_write_fn sink, void* arg) {
  if (sink == nullptr || t_suppress != 0 || t_lock_held != 0) return false;
  OsBuffer out;
  if (!render(format, out)) return false;
  constexpr size_t kPiece = 64 * 1024;
  for (size_t offset = 0; offset < out.size(); offset += kPiece) {
    size_t len = out.size() - offset < kPiece ? out.size() - offset : kPiece;
    if (!sink(arg, out.data() + offset, len)) return false;
  }
  return true;
}

bool exit_dump_path_fits(const char* path) {
  return path == nullptr || strlen(path) < sizeof g_exit_path;
}

void set_exit_dump(const Settings& s) {
  if (s.exit_path_given) {
    if (s.exit_path == nullptr) {
      g_exit_path[0] = '\0';
    } else if (exit_dump_path_fits(s.exit_path)) {
      memcpy(g_exit_path, s.exit_path, strlen(s.exit_path) + 1);
    }
  }
  if (s.exit_format_given) g_exit_format = s.exit_format;
}

// Runs at normal exit (or unload): a profile of what is still allocated, even if the profiler
// never ran (an empty profile), whenever HEAPSCOPE_PROF_DUMP_AT_EXIT or the config asked.
__attribute__((destructor)) static void dump_at_exit() {
  if (g_exit_path[0] == '\0') return;
  if (!dump_to_path(g_exit_path, static_cast<int>(g_exit_format))) {
    warning("heapscope: could not write the profile at exit");
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

}  // extern "C"
