// The writers run where malloc may be the caller (the profiler dumps from inside the
// allocator's process, with its own lock rules), so they must not allocate: this binary
// interposes the malloc family, forwarding to glibc, and counts the calls made while a
// writer runs. Only the symbolizer's demangler may allocate. Not built under sanitizers
// (they own malloc).
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstddef>

#include "demo_functions.h"
#include "profile_fixture.h"
#include "profiler/profile_writer.h"

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* ptr);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<size_t> g_allocations{0};
void count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}
}  // namespace

extern "C" {
void* malloc(size_t size) {
  count();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* ptr, size_t size) {
  count();
  return __libc_realloc(ptr, size);
}
void free(void* ptr) { __libc_free(ptr); }
void* memalign(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  count();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}

namespace hs_test {
namespace {

// Counts the allocations made by `body`.
template <typename Body>
size_t allocations_during(Body body) {
  g_allocations = 0;
  g_counting = true;
  body();
  g_counting = false;
  return g_allocations.load();
}

class NoMalloc : public ::testing::Test {
 protected:
  void SetUp() override {
    pcs_ = demo_addresses();
    profile_.add({pcs_.small_c, pcs_.entry}, 3, 32, 5);
    profile_.add({pcs_.big_member, pcs_.entry}, 2, 1 << 20, 2);
    c_only_.add({pcs_.small_c, pcs_.entry}, 3, 32, 5);
    // The counter works: a plain malloc is seen.
    ASSERT_EQ(allocations_during([] {
                void* volatile p = malloc(16);
                free(p);
              }),
              1u);
  }
  DemoAddresses pcs_{};
  FakeProfile profile_{4096, true};
  FakeProfile c_only_{4096, true};
};

TEST_F(NoMalloc, VisitModules) {
  size_t modules = 0;
  EXPECT_EQ(allocations_during([&] {
              EXPECT_TRUE(prof::visit_modules(
                  [](const hs_prof_module_info_t*, void* arg) {
                    ++*static_cast<size_t*>(arg);
                    return true;
                  },
                  &modules));
            }),
            0u);
  EXPECT_GT(modules, 1u);
}

TEST_F(NoMalloc, TextWriter) {
  prof::OsBuffer out;
  EXPECT_EQ(
      allocations_during([&] { EXPECT_TRUE(prof::write_text_profile(profile_.data(), out)); }), 0u);
  EXPECT_GT(out.size(), 0u);
}

TEST_F(NoMalloc, ProtoWriterWithGzip) {
  prof::OsBuffer out;
  EXPECT_EQ(allocations_during([&] {
              EXPECT_TRUE(prof::write_proto_profile(profile_.data(),
                                                    {.symbolize = false, .gzip = true}, out));
            }),
            0u);
  EXPECT_GT(out.size(), 0u);
}

// Symbolizing C names reads ELF files without allocating; only demangling a C++ name does.
TEST_F(NoMalloc, SymbolizerAllocatesOnlyToDemangle) {
  prof::OsBuffer c_out;
  EXPECT_EQ(allocations_during([&] {
              EXPECT_TRUE(prof::write_proto_profile(c_only_.data(),
                                                    {.symbolize = true, .gzip = true}, c_out));
            }),
            0u);
  prof::OsBuffer out;
  size_t with_cpp = allocations_during([&] {
    EXPECT_TRUE(prof::write_proto_profile(profile_.data(), {.symbolize = true, .gzip = true}, out));
  });
  EXPECT_GE(with_cpp, 1u);  // __cxa_demangle's result for demo::Holder::allocate_big()
  EXPECT_LE(with_cpp, 4u);
}

}  // namespace
}  // namespace hs_test
