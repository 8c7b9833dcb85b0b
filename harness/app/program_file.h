// What the file behind a command is, as far as LD_PRELOAD is concerned (`hsbench app`'s static
// checks, before any probe run):
//   - a script (#!): the interpreter is what runs, so it is inspected too;
//   - an ELF without PT_INTERP: statically linked, the dynamic loader never runs, no preload;
//   - set-uid/set-gid to someone else, or with file capabilities: the loader runs in secure
//     mode and ignores LD_PRELOAD paths;
//   - a Go program (Go build-info sections): its runtime allocates with mmap, not malloc;
//   - allocator symbols in the executable: malloc exported by the executable itself (it wins
//     symbol lookup over any preloaded library), a Rust #[global_allocator], or a statically
//     linked jemalloc/mimalloc/tcmalloc.
// Only reads the file; the probe run (app_probe.h) then checks what really happens.
#pragma once

#include <string>
#include <vector>

namespace heapscope::harness {

struct ProgramFile {
  std::string path;   // absolute path of the file inspected
  std::string error;  // non-empty: not found / not readable / not executable
  bool script = false;
  std::string interpreter;  // for scripts: the first word of the #! line
  bool elf = false;
  bool dynamic = false;  // an ELF with PT_INTERP (the dynamic loader runs it)
  bool setuid = false;
  bool setgid = false;
  bool capabilities = false;  // security.capability extended attribute
  bool secure_exec = false;   // running it changes our ids or privileges: LD_PRELOAD ignored
  bool go = false;
  // Allocator-related symbols the executable defines, each with a few words of meaning.
  std::vector<std::string> allocator_symbols;
  // Allocator-specific functions the executable imports (jemalloc's mallctl, nallocx, ...):
  // it is linked against that allocator, and those calls reach it under any preload.
  std::vector<std::string> imported_allocator_api;
};

// argv[0] as exec would find it: a name with a '/' relative to `cwd` (empty = ours), else the
// first executable match in `path_env` (a PATH value). Empty when not found.
std::string resolve_command(const std::string& command, const std::string& cwd,
                            const std::string& path_env);

ProgramFile inspect_program_file(const std::string& path);

// The PATH value of an environment (KEY=VALUE entries); /usr/bin:/bin when it has none.
std::string path_variable(const std::vector<std::string>& env);

// The file and, for scripts, its interpreter chain (at most 4 deep).
std::vector<ProgramFile> inspect_program_chain(const std::string& path);

}  // namespace heapscope::harness
