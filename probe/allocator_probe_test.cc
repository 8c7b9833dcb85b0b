#include "probe/allocator_probe.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace heapscope::probe {
namespace {

// The file libc was loaded from, as the dynamic linker spelled it (often through a symlinked
// directory such as /lib -> usr/lib).
std::string loaded_libc_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&::getpid), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  return info.dli_fname;
}

TEST(ProbeUnit, ObjectToRegistryId) {
  EXPECT_EQ(allocator_id_for_object("/usr/lib/x86_64-linux-gnu/libc.so.6"), "glibc");
  EXPECT_EQ(allocator_id_for_object("/usr/lib/x86_64-linux-gnu/libmimalloc.so.2.0"), "mimalloc");
  EXPECT_EQ(allocator_id_for_object("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"), "jemalloc");
  EXPECT_EQ(allocator_id_for_object("/x/libtcmalloc_minimal.so.4.5.10"), "tcmalloc");
  EXPECT_EQ(allocator_id_for_object("/build/engine/libheapscope.so"), "engine");
  EXPECT_EQ(allocator_id_for_object("/build/engine/libheapscope_noprof.so"), "engine-noprof");
  EXPECT_EQ(allocator_id_for_object("/opt/libfancy.so"), "libfancy.so");
  EXPECT_EQ(allocator_id_for_object("plain"), "plain");
}

TEST(ProbeUnit, ThisProcessIsConsistent) {
  const AllocatorIdentity id = identify_allocator();
  EXPECT_TRUE(id.consistent) << id.malloc_object << " " << id.free_object << " "
                             << id.realloc_object << " " << id.calloc_object;
  EXPECT_TRUE(std::filesystem::exists(id.malloc_object)) << id.malloc_object;
  std::string why;
  EXPECT_TRUE(matches_expected(id, id.malloc_object, &why)) << why;
}

TEST(ProbeUnit, MatchesBySymlinkAndNamesTheMismatch) {
  const std::string libc = loaded_libc_path();
  ASSERT_FALSE(libc.empty());
  const std::string real = std::filesystem::canonical(libc).string();
  const AllocatorIdentity id{real, real, real, real, true};
  std::string why;
  EXPECT_TRUE(matches_expected(id, libc, &why)) << why;  // libc path may be a symlinked dir

  AllocatorIdentity mixed = id;
  mixed.realloc_object = "/nonexistent/libother.so";
  EXPECT_FALSE(matches_expected(mixed, libc, &why));
  EXPECT_NE(why.find("realloc is served by /nonexistent/libother.so"), std::string::npos) << why;
}

}  // namespace
}  // namespace heapscope::probe
