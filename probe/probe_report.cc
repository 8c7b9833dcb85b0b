#include "probe/probe_report.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "probe/allocator_probe.h"

namespace heapscope::probe {

int report_identity(const std::string& expect, std::ostream& out, std::ostream& err) {
  const AllocatorIdentity id = identify_allocator();
  const nlohmann::ordered_json line = {
      {"allocator", allocator_id_for_object(id.malloc_object)},
      {"consistent", id.consistent},
      {"malloc", id.malloc_object},
      {"free", id.free_object},
      {"realloc", id.realloc_object},
      {"calloc", id.calloc_object},
  };
  out << line.dump() << std::endl;

  if (expect.empty()) return kProbeExitOk;
  struct stat st {};
  if (stat(expect.c_str(), &st) != 0) {
    err << "probe: --expect " << expect << ": no such file\n";
    return kProbeExitBadExpect;
  }
  std::string why;
  if (!matches_expected(id, expect, &why)) {
    err << "probe: allocator mismatch: " << why << "\n";
    return kProbeExitMismatch;
  }
  return kProbeExitOk;
}

}  // namespace heapscope::probe
