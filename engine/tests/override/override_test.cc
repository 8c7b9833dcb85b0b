// The overriding build, linked statically (heapscope_static): the C library's allocation
// functions and every form of C++ operator new/delete are heapscope's, with the C library's
// errno rules, and a failing new calls the new-handler, retries, then throws std::bad_alloc.
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::is_aligned;
using hs_test::opaque;
using hs_test::stats_now;

constexpr size_t kHuge = size_t{1} << 62;  // fails in every allocator, no overflow involved

TEST(Override, MallocFamilyIsOurs) {
  void* m = std::malloc(16);
  void* c = std::calloc(10, 10);
  void* r = std::realloc(nullptr, 100);
  void* a = aligned_alloc(64, 128);
  void* ma = memalign(4096, 10);
  void* v = valloc(10);
  void* pv = pvalloc(10);
  void* ra = reallocarray(nullptr, 10, 10);
  void* pm = nullptr;
  ASSERT_EQ(posix_memalign(&pm, 256, 10), 0);
  char* s = strdup("heapscope");  // allocated inside the C library
  for (void* p : {m, c, r, a, ma, v, pv, ra, pm, static_cast<void*>(s)}) {
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(hs_is_in_heap_region(p)) << p;
    EXPECT_EQ(malloc_usable_size(p), hs_usable_size(p));
  }
  EXPECT_TRUE(is_aligned(a, 64));
  EXPECT_TRUE(is_aligned(ma, 4096));
  EXPECT_TRUE(is_aligned(pm, 256));
  EXPECT_STREQ(s, "heapscope");
  for (void* p : {m, c, r, a, ma, v, pv, ra, pm, static_cast<void*>(s)}) std::free(p);
}

TEST(Override, FreeIsCountedByTheEngine) {
  void* p = std::malloc(100);
  ASSERT_NE(p, nullptr);
  const hs_stats_t before = stats_now();
  std::free(p);
  EXPECT_EQ(stats_now().free_count - before.free_count, 1u);
}

TEST(Override, CLibrarySemanticsAndErrno) {
  errno = 0;
  EXPECT_EQ(std::malloc(opaque(SIZE_MAX)), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(std::calloc(opaque(SIZE_MAX / 2), 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(aligned_alloc(opaque(size_t{3}), 16), nullptr);
  EXPECT_EQ(errno, EINVAL);
  void* const sentinel =
      reinterpret_cast<void*>(uintptr_t{0x1234});  // NOLINT(performance-no-int-to-ptr)
  void* out = sentinel;
  EXPECT_EQ(posix_memalign(&out, opaque(size_t{4}), 16), EINVAL);
  EXPECT_EQ(out, sentinel);
  void* zero = std::malloc(0);
  ASSERT_NE(zero, nullptr);
  std::free(zero);
  std::free(nullptr);
  void* p = std::malloc(100);
  ASSERT_NE(p, nullptr);
  std::memset(p, 7, 100);
  // Through a pointer, so the compiler does not treat p as freed after the (failing) call.
  void* (*volatile reallocarray_fn)(void*, size_t, size_t) = &reallocarray;
  errno = 0;
  EXPECT_EQ(reallocarray_fn(p, opaque(SIZE_MAX / 2), 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(static_cast<unsigned char*>(p)[99], 7);
  const hs_stats_t before = stats_now();
  EXPECT_EQ(std::realloc(p, 0), nullptr);  // frees
  EXPECT_EQ(stats_now().free_count - before.free_count, 1u);
}

struct alignas(256) OverAligned {
  char bytes[300];
};

TEST(Override, EveryFormOfNewAndDelete) {
  const hs_stats_t before = stats_now();
  int* one = new int(5);
  int* many = new int[100];
  int* nothrow_one = new (std::nothrow) int(6);
  int* nothrow_many = new (std::nothrow) int[100];
  auto* aligned_one = new OverAligned;
  auto* aligned_many = new OverAligned[3];
  auto* aligned_nothrow = new (std::nothrow) OverAligned;
  void* raw = ::operator new(1000);
  void* raw_array = ::operator new[](1000);
  void* raw_aligned = ::operator new (1000, std::align_val_t{4096});
  void* raw_aligned_array = ::operator new[](1000, std::align_val_t{1 << 20});
  void* raw_aligned_nothrow = ::operator new (100, std::align_val_t{512}, std::nothrow);
  void* raw_aligned_array_nothrow = ::operator new[](100, std::align_val_t{64}, std::nothrow);
  const void* all[] = {one,
                       many,
                       nothrow_one,
                       nothrow_many,
                       aligned_one,
                       aligned_many,
                       aligned_nothrow,
                       raw,
                       raw_array,
                       raw_aligned,
                       raw_aligned_array,
                       raw_aligned_nothrow,
                       raw_aligned_array_nothrow};
  for (const void* p : all) {
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(hs_is_in_heap_region(p)) << p;
  }
  EXPECT_EQ(stats_now().alloc_count - before.alloc_count, std::size(all));
  EXPECT_TRUE(is_aligned(aligned_one, 256));
  EXPECT_TRUE(is_aligned(aligned_many, 256));
  EXPECT_TRUE(is_aligned(aligned_nothrow, 256));
  EXPECT_TRUE(is_aligned(raw_aligned, 4096));
  EXPECT_TRUE(is_aligned(raw_aligned_array, 1 << 20));
  EXPECT_TRUE(is_aligned(raw_aligned_nothrow, 512));
  EXPECT_TRUE(is_aligned(raw_aligned_array_nothrow, 64));

  delete one;
  delete[] many;
  delete nothrow_one;
  delete[] nothrow_many;
  delete aligned_one;
  delete[] aligned_many;
  delete aligned_nothrow;
  ::operator delete (raw, size_t{1000});                                  // sized
  ::operator delete[](raw_array, size_t{1000});                           // sized array
  ::operator delete (raw_aligned, size_t{1000}, std::align_val_t{4096});  // sized aligned
  ::operator delete[](raw_aligned_array, std::align_val_t{1 << 20});      // aligned array
  ::operator delete (raw_aligned_nothrow, std::align_val_t{512}, std::nothrow);
  ::operator delete[](raw_aligned_array_nothrow, std::align_val_t{64}, std::nothrow);
  const hs_stats_t after = stats_now();
  EXPECT_EQ(after.free_count - before.free_count, std::size(all));
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
}

int g_handler_calls = 0;
void counting_handler() {
  // Called on each failed attempt; after the third it gives up, so new must have retried.
  if (++g_handler_calls == 3) std::set_new_handler(nullptr);
}

TEST(Override, FailedNewCallsHandlerRetriesThenThrows) {
  g_handler_calls = 0;
  std::set_new_handler(counting_handler);
  EXPECT_THROW(
      {
        void* p = ::operator new(opaque(kHuge));
        ::operator delete(p);
      },
      std::bad_alloc);
  EXPECT_EQ(g_handler_calls, 3);
  std::set_new_handler(nullptr);

  g_handler_calls = 0;
  std::set_new_handler(counting_handler);
  EXPECT_THROW(
      {
        void* p = ::operator new (opaque(kHuge), std::align_val_t{64});
        ::operator delete (p, std::align_val_t{64});
      },
      std::bad_alloc);
  EXPECT_EQ(g_handler_calls, 3);
  std::set_new_handler(nullptr);
}

TEST(Override, FailingNewWithoutHandlerThrowsAndNothrowReturnsNull) {
  std::set_new_handler(nullptr);
  EXPECT_THROW(
      {
        void* p = ::operator new[](opaque(kHuge));
        ::operator delete[](p);
      },
      std::bad_alloc);
  EXPECT_EQ(::operator new(opaque(kHuge), std::nothrow), nullptr);
  EXPECT_EQ(::operator new[](opaque(kHuge), std::nothrow), nullptr);
  EXPECT_EQ(::operator new (opaque(kHuge), std::align_val_t{128}, std::nothrow), nullptr);
}

TEST(Override, HandlerThatThrowsPropagates) {
  struct Custom {};
  std::set_new_handler([] { throw Custom{}; });
  EXPECT_THROW(
      {
        void* p = ::operator new(opaque(kHuge));
        ::operator delete(p);
      },
      Custom);
  std::set_new_handler(nullptr);
}

// The nothrow forms run the handler too; when it throws they return nullptr (the engine has no
// exceptions of its own: it hands these to the C++ runtime's nothrow forms).
TEST(Override, NothrowNewWithHandlerRetriesThenReturnsNull) {
  g_handler_calls = 0;
  std::set_new_handler(counting_handler);
  EXPECT_EQ(::operator new(opaque(kHuge), std::nothrow), nullptr);
  EXPECT_EQ(g_handler_calls, 3);
  g_handler_calls = 0;
  std::set_new_handler(counting_handler);
  EXPECT_EQ(::operator new[](opaque(kHuge), std::align_val_t{256}, std::nothrow), nullptr);
  EXPECT_EQ(g_handler_calls, 3);

  std::set_new_handler([] { throw std::bad_alloc(); });
  EXPECT_EQ(::operator new(opaque(kHuge), std::nothrow), nullptr);
  EXPECT_EQ(::operator new (opaque(kHuge), std::align_val_t{64}, std::nothrow), nullptr);
  std::set_new_handler(nullptr);
}

TEST(Override, StandardContainersAndThreads) {
  std::vector<std::string> words;
  std::map<int, std::string> index;
  for (int i = 0; i < 20000; ++i) {
    words.push_back("word number " + std::to_string(i) +
                    std::string(static_cast<size_t>(i % 50), 'x'));
    index[i] = words.back();
  }
  EXPECT_TRUE(hs_is_in_heap_region(words.data()));
  EXPECT_TRUE(hs_is_in_heap_region(words.back().data()));
  std::vector<std::string*> from_thread;
  std::thread([&] {
    for (int i = 0; i < 1000; ++i) from_thread.push_back(new std::string(100, 'y'));
  }).join();
  for (std::string* s : from_thread) {
    EXPECT_EQ(s->size(), 100u);
    EXPECT_TRUE(hs_is_in_heap_region(s));
    delete s;  // freed on another thread than the (exited) allocating one
  }
  EXPECT_EQ(index.at(12345), words[12345]);
}

// Real exhaustion, not an impossible size: with the address space capped (in a child),
// operator new throws std::bad_alloc once the OS refuses memory, nothrow new returns null, and
// new succeeds again once the blocks are freed.
TEST(Override, NewUnderACappedAddressSpaceThrowsAndRecovers) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(30);
    std::set_new_handler(nullptr);
    static void* blocks[4096];  // no allocation while the space is full
    size_t count = 0;
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) != 0) _exit(2);
    size_t mapped = 0;
    if (FILE* status = std::fopen("/proc/self/status", "r")) {
      char line[256];
      while (std::fgets(line, sizeof line, status) != nullptr) {
        if (std::strncmp(line, "VmSize:", 7) == 0)
          mapped = std::strtoull(line + 7, nullptr, 10) * 1024;
      }
      std::fclose(status);
    }
    limit.rlim_cur = mapped + (128u << 20);
    if (mapped == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    bool threw = false;
    try {
      while (count < 4096) {
        void* block = ::operator new(1u << 20);  // the one that throws stores nothing
        blocks[count++] = block;
      }
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    if (!threw || count < 16) _exit(4);
    if (::operator new(8u << 20, std::nothrow) != nullptr) _exit(5);
    if (::operator new[](8u << 20, std::align_val_t{4096}, std::nothrow) != nullptr) _exit(6);
    for (size_t i = 0; i < count; ++i) ::operator delete(blocks[i]);
    void* again = ::operator new(8u << 20);  // throws (and the child dies) if not recovered
    ::operator delete(again);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2-3 setup, 4 no bad_alloc, 5-6 nothrow new not null";
}

TEST(Override, ForkedChildUsesTheAllocator) {
  std::vector<std::string> parent(1000, std::string(64, 'p'));
  std::thread busy([] {
    for (int i = 0; i < 20000; ++i) delete new std::string(static_cast<size_t>(i % 500), 'b');
  });
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);
    std::vector<std::string> child;
    child.reserve(10000);
    for (int i = 0; i < 10000; ++i) child.emplace_back(static_cast<size_t>(i % 300), 'c');
    void* big = std::malloc(8 << 20);
    const bool ok =
        big != nullptr && hs_is_in_heap_region(big) && parent[999] == std::string(64, 'p');
    std::free(big);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  busy.join();
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
