#include "probe/allocator_probe.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>

namespace heapscope::probe {
namespace {

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

// The object that defines `symbol` for the process. The main program's link_map has an empty
// name, so that case is answered with /proc/self/exe.
std::string owner_of(const char* symbol) {
  void* address = dlsym(RTLD_DEFAULT, symbol);
  if (address == nullptr) return "(unresolved)";
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0) {
    return "(unknown)";
  }
  if (map == nullptr || map->l_name == nullptr || map->l_name[0] == '\0') {
    return real_path("/proc/self/exe");
  }
  return real_path(map->l_name);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return a == b;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

AllocatorIdentity identify_allocator() {
  AllocatorIdentity id{owner_of("malloc"), owner_of("free"), owner_of("realloc"),
                       owner_of("calloc"), false};
  id.consistent = id.malloc_object == id.free_object && id.malloc_object == id.realloc_object &&
                  id.malloc_object == id.calloc_object;
  return id;
}

std::string allocator_id_for_object(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (starts_with(name, "libc.so") || starts_with(name, "libc-")) return "glibc";
  if (starts_with(name, "libmimalloc")) return "mimalloc";
  if (starts_with(name, "libjemalloc")) return "jemalloc";
  if (starts_with(name, "libtcmalloc")) return "tcmalloc";
  if (starts_with(name, "libheapscope_noprof.so")) return "engine-noprof";
  if (starts_with(name, "libheapscope.so")) return "engine";
  return name;
}

bool matches_expected(const AllocatorIdentity& identity, const std::string& expected_object_path,
                      std::string* why) {
  const std::pair<const char*, const std::string*> served[] = {
      {"malloc", &identity.malloc_object},
      {"free", &identity.free_object},
      {"realloc", &identity.realloc_object},
      {"calloc", &identity.calloc_object},
  };
  for (const auto& [function, object] : served) {
    if (!same_file(*object, expected_object_path)) {
      if (why != nullptr) {
        *why = std::string(function) + " is served by " + *object + ", expected " +
               expected_object_path;
      }
      return false;
    }
  }
  return true;
}

}  // namespace heapscope::probe
