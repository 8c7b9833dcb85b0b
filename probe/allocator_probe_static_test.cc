// A program that links its own malloc (the way heapscope_static or a statically linked peer
// would) must be reported as running on itself, not on libc.so.6. The override is in
// static_override.c.
#include <gtest/gtest.h>

#include <filesystem>

#include "probe/allocator_probe.h"

namespace heapscope::probe {
namespace {

TEST(ProbeStaticOverride, NamesTheExecutable) {
  const AllocatorIdentity id = identify_allocator();
  const std::string self = std::filesystem::canonical("/proc/self/exe").string();
  EXPECT_EQ(id.malloc_object, self);
  EXPECT_TRUE(id.consistent);
  std::string why;
  EXPECT_TRUE(matches_expected(id, self, &why)) << why;
  EXPECT_EQ(allocator_id_for_object(id.malloc_object), "allocator_probe_static_test");
}

}  // namespace
}  // namespace heapscope::probe
