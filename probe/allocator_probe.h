// The ownership probe: from inside a running process, which shared object really serves
// malloc, free, realloc and calloc. A campaign child links this and refuses to run when the
// answer is not the allocator it was asked to measure.
//
// Deliberately small and dependency-free (libc + libdl) so any child can link it.
#pragma once

#include <string>

namespace heapscope::probe {

struct AllocatorIdentity {
  std::string malloc_object, free_object, realloc_object, calloc_object;
  bool consistent;  // all four served by the same object
};

// Resolves each function as the dynamic linker binds it for the whole process
// (dlsym(RTLD_DEFAULT) + dladdr), realpath'd. A statically linked, exported override resolves
// to the executable itself.
AllocatorIdentity identify_allocator();

// Best-effort object → registry id: "glibc" for libc.so.6, "mimalloc", "jemalloc", "tcmalloc",
// "engine" for libheapscope.so, "engine-noprof" for libheapscope_noprof.so, else the file name.
std::string allocator_id_for_object(const std::string& path);

// True if all four functions resolve to `expected_object_path` (compared by device and inode,
// so symlinks and different spellings of one file agree). Otherwise *why (if non-null) names
// the first function served elsewhere.
bool matches_expected(const AllocatorIdentity&, const std::string& expected_object_path,
                      std::string* why);

}  // namespace heapscope::probe
