// Module enumeration: main executable first with its /proc/self/exe path, executable
// segments only, build IDs as lowercase hex, no vDSO, early stop.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "demo_functions.h"
#include "profile_fixture.h"
#include "profiler/profile_writer.h"

namespace hs_test {
namespace {

struct Module {
  std::string path, build_id;
  uintptr_t start;
  size_t size;
  uint64_t file_offset;
  bool is_main;
};

bool collect(const hs_prof_module_info_t* info, void* arg) {
  static_cast<std::vector<Module>*>(arg)->push_back(
      {info->path, info->build_id, info->start, info->size, info->file_offset, info->is_main != 0});
  return true;
}

TEST(Modules, MainExecutableFirstThenLibraries) {
  std::vector<Module> modules;
  ASSERT_TRUE(prof::visit_modules(collect, &modules));
  ASSERT_GE(modules.size(), 2u);
  EXPECT_TRUE(modules[0].is_main);
  EXPECT_EQ(modules[0].path, self_exe_path());
  uintptr_t pc = demo_addresses().small_c;
  bool found = false;
  for (const Module& m : modules) {
    EXPECT_EQ(m.is_main, m.path == modules[0].path);
    EXPECT_EQ(m.path.find("vdso"), std::string::npos);
    EXPECT_EQ(m.path[0], '/') << m.path;
    EXPECT_GT(m.size, 0u);
    EXPECT_EQ(m.build_id.find_first_not_of("0123456789abcdef"), std::string::npos);
    if (m.is_main && pc >= m.start && pc < m.start + m.size) found = true;
  }
  EXPECT_TRUE(found) << "the test's own code is in a main-executable segment";
  EXPECT_EQ(modules[0].build_id.size(), 40u);
}

TEST(Modules, VisitorStopsTheWalk) {
  int calls = 0;
  ASSERT_TRUE(prof::visit_modules(
      [](const hs_prof_module_info_t*, void* arg) {
        ++*static_cast<int*>(arg);
        return false;
      },
      &calls));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace hs_test
