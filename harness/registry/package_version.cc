#include "harness/registry/package_version.h"

#include <vector>

#include "harness/process/run_command.h"

namespace heapscope::harness {
namespace {

// The merged-/usr twin of a path, or "" when it has none.
std::string usr_merge_twin(const std::string& path) {
  const std::string usr = "/usr";
  if (path.rfind("/usr/lib/", 0) == 0) return path.substr(usr.size());
  if (path.rfind("/lib/", 0) == 0) return usr + path;
  return "";
}

// First line of `dpkg-query -S` looks like "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6",
// possibly with several packages before the ": " ("a, b: path"); we take the first one.
std::optional<std::string> owner_of(const std::string& path) {
  CommandResult r = run_command({"dpkg-query", "-S", path});
  if (!r.ok()) return std::nullopt;
  const size_t end = r.out.find(": ");
  if (end == std::string::npos) return std::nullopt;
  std::string owners = r.out.substr(0, end);
  const size_t comma = owners.find(", ");
  return comma == std::string::npos ? owners : owners.substr(0, comma);
}

}  // namespace

std::optional<PackageVersion> debian_package_of(const std::string& path, std::string* error) {
  std::optional<std::string> owner = owner_of(path);
  if (!owner) {
    const std::string twin = usr_merge_twin(path);
    if (!twin.empty()) owner = owner_of(twin);
  }
  if (!owner) {
    if (error != nullptr) *error = "no Debian package owns " + path;
    return std::nullopt;
  }
  CommandResult r = run_command({"dpkg-query", "-W", "-f", "${Version}", *owner});
  if (!r.ok() || r.out.empty()) {
    if (error != nullptr) *error = "dpkg-query -W " + *owner + " failed: " + r.error + r.err;
    return std::nullopt;
  }
  const size_t colon = owner->find(':');
  return PackageVersion{colon == std::string::npos ? *owner : owner->substr(0, colon), r.out};
}

}  // namespace heapscope::harness
