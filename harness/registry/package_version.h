// Which Debian package ships a file, and its installed version (dpkg-query). Provenance for the
// system allocators: a result names "libjemalloc2 5.3.0-1", not just a path.
#pragma once

#include <optional>
#include <string>

namespace heapscope::harness {

struct PackageVersion {
  std::string package;  // without the ":arch" qualifier, e.g. "libc6"
  std::string version;  // e.g. "2.36-9+deb12u4"
};

// Tries the path as given and its merged-/usr twin (/lib/... vs /usr/lib/...), because dpkg
// records files under the directory the package shipped them in. nullopt when no package owns
// the file or dpkg-query is unavailable; *error then says why.
std::optional<PackageVersion> debian_package_of(const std::string& path, std::string* error);

}  // namespace heapscope::harness
