// Linux module enumeration (platform.h) with dl_iterate_phdr: no /proc/self/maps parsing and
// no allocation (the loader lock is held, and we may be inside malloc's caller). One entry per
// executable PT_LOAD: pprof readers symbolize an address by the file offset of the executable
// segment that holds it, so each such segment is its own mapping.
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "platform/platform.h"
#include "support/format.h"

namespace heapscope::os {
namespace {

constexpr size_t kMaxBuildIdBytes = 64;

struct ModuleWalk {
  ModuleSegmentFn fn;
  void* arg;
  bool first = true;  // dl_iterate_phdr reports the main executable first
};

size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

// Finds NT_GNU_BUILD_ID in the module's PT_NOTE segments (already mapped: notes are in the
// first read-only segment) and writes it as lowercase hex into `hex` ("" if absent).
void read_build_id(const dl_phdr_info& info, char (&hex)[2 * kMaxBuildIdBytes + 1]) {
  hex[0] = '\0';
  for (ElfW(Half) i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info.dlpi_phdr[i];
    if (phdr.p_type != PT_NOTE) continue;
    // The loader reports addresses as integers. NOLINTNEXTLINE(performance-no-int-to-ptr)
    const auto* note = reinterpret_cast<const uint8_t*>(info.dlpi_addr + phdr.p_vaddr);
    size_t remaining = phdr.p_memsz;
    while (remaining >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) header;
      memcpy(&header, note, sizeof header);
      size_t name_size = align4(header.n_namesz);
      size_t desc_size = align4(header.n_descsz);
      size_t total = sizeof header + name_size + desc_size;
      if (total > remaining) break;
      const uint8_t* name = note + sizeof header;
      const uint8_t* desc = name + name_size;
      if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
          header.n_descsz <= kMaxBuildIdBytes) {
        fmt::hex_bytes(desc, header.n_descsz, hex);
        return;
      }
      note += total;
      remaining -= total;
    }
  }
}

bool is_vdso(const char* name) {
  return strstr(name, "linux-vdso") != nullptr || strstr(name, "linux-gate") != nullptr ||
         strcmp(name, "[vdso]") == 0;
}

int visit_one_module(dl_phdr_info* info, size_t /*info_size*/, void* arg) {
  auto* walk = static_cast<ModuleWalk*>(arg);
  bool is_main = walk->first;
  walk->first = false;

  // The main executable comes first with an empty name; its path is /proc/self/exe's target.
  char exe_path[PATH_MAX];
  const char* path = info->dlpi_name;
  if (is_main && (path == nullptr || path[0] == '\0')) {
    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    if (n <= 0) return 0;
    exe_path[n] = '\0';
    path = exe_path;
  }
  if (path == nullptr || path[0] == '\0' || is_vdso(path)) return 0;

  char build_id[2 * kMaxBuildIdBytes + 1];
  read_build_id(*info, build_id);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_LOAD || (phdr.p_flags & PF_X) == 0) continue;
    ModuleSegment segment{
        .path = path,
        .build_id = build_id,
        .start = info->dlpi_addr + phdr.p_vaddr,
        .size = phdr.p_memsz,
        .file_offset = phdr.p_offset,
        .load_bias = info->dlpi_addr,
        .is_main = is_main,
    };
    if (!walk->fn(segment, walk->arg)) return 1;  // a nonzero return ends the walk
  }
  return 0;
}

}  // namespace

void for_each_module_segment(ModuleSegmentFn fn, void* arg) {
  ModuleWalk walk{.fn = fn, .arg = arg};
  dl_iterate_phdr(visit_one_module, &walk);
}

}  // namespace heapscope::os
