// The allocators under test (harness/docs/protocol.md#allocators): what each one is, how it enters
// a child process, and its provenance (resolved library, package version, SHA-256, availability).
//
//   registry_specs()     built-in ids + user NAME=PATH additions   (what exists)
//   select_allocators()  --only ID,...                              (what was asked for)
//   inspect_allocator()  realpath, dpkg, sha256, probe in a child    (what it really is)
//
// A missing allocator is reported as unavailable with a reason, never replaced by glibc.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/registry/engine_libraries.h"
#include "harness/registry/library_check.h"

namespace heapscope::harness {

// A user error (unknown id, bad NAME=PATH, missing file): the message is meant for the user.
class RegistryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class VersionSource { kDebianPackage, kBuildTree };

struct AllocatorSpec {
  std::string id;
  std::string description;
  std::string library;  // the shared object that serves malloc in the child
  bool preload = true;  // false for glibc: it enters the child by doing nothing
  std::vector<std::pair<std::string, std::string>> env;  // extra environment for the child
  VersionSource version_source = VersionSource::kDebianPackage;
  std::string build_version;   // for kBuildTree
  std::string missing_reason;  // prefix used when `library` does not exist
  // When set, the allocator is listed (with provenance) but never run: a row that would
  // measure something other than its name says (e.g. a profiler that does not exist yet).
  std::string unavailable_reason;
  bool user_supplied = false;  // from --allocator NAME=PATH
  // Run only when named (--allocators, a campaign's list), never as part of "every allocator":
  // the profiler-tax rows, which measure a profiler, not another allocator.
  bool opt_in = false;
};

struct AllocatorInfo {
  AllocatorSpec spec;
  std::string resolved_path;  // realpath(spec.library); empty when missing
  std::string package;        // Debian package, or "heapscope" for the build tree
  std::string version;
  std::string sha256;  // of resolved_path
  bool available = false;
  std::string reason;  // why not available
};

struct RegistryOptions {
  EngineLibraries engine;
  std::vector<std::string> user_allocators;  // "NAME=PATH"
};

// The built-in allocators, in the spec's order (builtin_allocators.cc).
std::vector<AllocatorSpec> builtin_allocator_specs(const EngineLibraries& engine);

// Built-in allocators in the spec's order, then the user's. Throws RegistryError for a
// malformed or duplicate NAME=PATH or a PATH that does not exist.
std::vector<AllocatorSpec> registry_specs(const RegistryOptions& options);

// The specs whose ids are listed, in the listed order. Throws RegistryError naming an unknown
// id and the known ones.
std::vector<AllocatorSpec> select_allocators(const std::vector<AllocatorSpec>& specs,
                                             const std::vector<std::string>& ids);

// What "every allocator" (no --allocators) runs: the specs without the opt-in ones.
std::vector<AllocatorSpec> default_allocators(std::vector<AllocatorSpec> specs);

// The ids to run when `ids` were listed (--allocators) and libraries were also supplied with
// --allocator NAME=PATH: a supplied library is there to be measured, so each one missing from
// the list is appended and named in *added (for the caller to say so). An empty list means
// every allocator already and is returned as it is.
std::vector<std::string> with_user_allocators(std::vector<std::string> ids,
                                              const std::vector<AllocatorSpec>& specs,
                                              std::vector<std::string>* added);

// Fills in provenance and availability; `probe` is run in a child set up like a campaign child
// to prove the library really serves malloc there.
AllocatorInfo inspect_allocator(const AllocatorSpec& spec, const ProbeCommand& probe);

// The inspected allocator with this id, or nullptr.
const AllocatorInfo* find_allocator(const std::vector<AllocatorInfo>& infos, const std::string& id);

// Environment entries ("KEY=VALUE") to add to a child so it runs on this allocator.
std::vector<std::string> child_environment(const AllocatorInfo& info);

// Appends HEAPSCOPE_PROF=0 and HEAPSCOPE_MEMORY_EVENTS=0 unless `env` sets them already: the
// engine's optional subsystems run in a measured child only when its allocator row (engine-prof)
// or the user asks.
void engine_subsystems_off_unless_set(std::vector<std::string>& env);

// The libc.so.6 this process runs on, as the dynamic loader named it.
std::string libc_path();

}  // namespace heapscope::harness
