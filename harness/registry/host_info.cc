#include "harness/registry/host_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

namespace heapscope::harness {
namespace {

// The value of the first "key<TAB>: value" line in a /proc file, or "".
std::string proc_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

}  // namespace

nlohmann::ordered_json host_info() {
  utsname u{};
  uname(&u);
  std::string mem = proc_field("/proc/meminfo", "MemTotal");
  if (const size_t sp = mem.find(' '); sp != std::string::npos) mem.resize(sp);
  return {{"hostname", u.nodename},
          {"sysname", u.sysname},
          {"release", u.release},
          {"version", u.version},
          {"machine", u.machine},
          {"cpu_model", proc_field("/proc/cpuinfo", "model name")},
          {"nproc", sysconf(_SC_NPROCESSORS_ONLN)},
          {"mem_total_kb", mem.empty() ? 0 : std::stoull(mem)}};
}

}  // namespace heapscope::harness
