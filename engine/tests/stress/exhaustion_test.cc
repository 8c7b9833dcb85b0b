// Resource exhaustion: with the address space capped (RLIMIT_AS, so every mmap the engine
// makes past the cap fails) every allocation function returns NULL with ENOMEM and nothing
// crashes, the running profiler counts what it could not record, and the engine serves again
// as soon as memory is freed or the cap is lifted. Each case runs in a forked child, since a
// capped address space would also starve the test framework.
#include <errno.h>
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "../support/test_support.h"

namespace {

using hs_test::kMiB;

// The process's mapped bytes now (VmSize).
size_t mapped_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  }
  return 0;
}

bool cap_address_space(size_t bytes) {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0) return false;
  limit.rlim_cur = bytes;
  return setrlimit(RLIMIT_AS, &limit) == 0;
}

bool lift_cap() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0) return false;
  limit.rlim_cur = limit.rlim_max;
  return setrlimit(RLIMIT_AS, &limit) == 0;
}

// Runs `body` in a child; its failures are lines on stderr and a non-zero exit code.
template <typename Body>
void in_child(Body body) {
  std::fflush(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(body());
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's lines above";
}

#define CHILD_CHECK(cond)                                                                 \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: child check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

// Fills the capped space with 1 MiB blocks; returns them (the last attempt failed).
std::vector<void*>* fill_with_mib_blocks(int* last_errno) {
  static std::vector<void*> blocks;  // reserved before the cap: pushing must not allocate
  blocks.clear();
  blocks.reserve(4096);
  errno = 0;
  while (blocks.size() < blocks.capacity()) {
    void* p = hs_malloc(kMiB);
    if (p == nullptr) break;
    std::memset(p, 0x5a, 4096);
    blocks.push_back(p);
  }
  *last_errno = errno;
  return &blocks;
}

TEST(Exhaustion, EveryAllocationFunctionFailsCleanlyAndTheEngineRecovers) {
  if (hs_test::kSanitized) GTEST_SKIP() << "sanitizers reserve more address space than the cap";
  in_child([]() -> int {
    // Every allocation sampled: the profiler's own memory runs out with the heap's.
    CHILD_CHECK(hs_prof_start(1));
    std::vector<void*> small_blocks;
    small_blocks.reserve(1 << 20);
    std::vector<void*> room;  // address space the test itself maps, reserved before the cap
    room.reserve(8192);
    CHILD_CHECK(cap_address_space(mapped_bytes() + 192 * kMiB));

    int err = 0;
    std::vector<void*>* blocks = fill_with_mib_blocks(&err);
    CHILD_CHECK(blocks->size() >= 64 && blocks->size() < blocks->capacity());
    CHILD_CHECK(err == ENOMEM);
    const size_t first_fill = blocks->size();

    // Every entry point, at a size the exhausted space cannot hold.
    errno = 0;
    CHILD_CHECK(hs_calloc(1, 64 * kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_zalloc(64 * kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_malloc_aligned(64 * kMiB, 1 << 20) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_calloc_aligned(1, 64 * kMiB, 4096) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_aligned_alloc(4096, 64 * kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_memalign(4096, 64 * kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_valloc(64 * kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_pvalloc(64 * kMiB) == nullptr && errno == ENOMEM);
    void* out = &err;
    errno = 0;
    CHILD_CHECK(hs_posix_memalign(&out, 4096, 64 * kMiB) == ENOMEM && out == &err && errno == 0);
    hs_heap_t* heap = hs_heap_get_default();
    errno = 0;
    CHILD_CHECK(hs_heap_malloc(heap, 64 * kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_heap_zalloc(heap, 64 * kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_heap_calloc(heap, 1, 64 * kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_heap_malloc_aligned(heap, 64 * kMiB, 4096) == nullptr && errno == ENOMEM);
    // A failed realloc leaves the block as it was.
    void* kept = (*blocks)[0];
    errno = 0;
    CHILD_CHECK(hs_realloc(kept, 512 * kMiB) == nullptr && errno == ENOMEM);
    CHILD_CHECK(static_cast<unsigned char*>(kept)[4095] == 0x5a);
    // So does every other resize call.
    errno = 0;
    CHILD_CHECK(hs_reallocarray(kept, 512, kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_realloc_aligned(kept, 512 * kMiB, 4096) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_rezalloc(kept, 512 * kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_recalloc(kept, 512, kMiB) == nullptr && errno == ENOMEM);
    errno = 0;
    CHILD_CHECK(hs_heap_realloc(heap, kept, 512 * kMiB) == nullptr && errno == ENOMEM);
    CHILD_CHECK(static_cast<unsigned char*>(kept)[4095] == 0x5a);
    // Small blocks fill the room the segments still have, then fail the same way. Each is
    // sampled, and its record needs profiler memory the capped space no longer has.
    errno = 0;
    while (small_blocks.size() < small_blocks.capacity()) {
      void* p = hs_malloc(48);
      if (p == nullptr) break;
      small_blocks.push_back(p);
    }
    CHILD_CHECK(small_blocks.size() < small_blocks.capacity() && errno == ENOMEM);

    // The heap stops at its next segment mapping (64 MiB with alignment padding); the profiler
    // maps small chunks, and still finds room. Take that room too, then give the heap 2 MiB
    // back inside its segments: the ~43,000 sampled blocks it now serves need records the
    // profiler cannot map.
    while (room.size() < room.capacity()) {
      void* m =
          mmap(nullptr, 64 * 1024, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) break;
      room.push_back(m);
    }
    CHILD_CHECK(room.size() < room.capacity());
    for (size_t i = 0; i < 2; ++i) {
      hs_free((*blocks)[8 + i]);
      (*blocks)[8 + i] = (*blocks)[blocks->size() - 1 - i];
    }
    blocks->resize(blocks->size() - 2);
    for (size_t i = 0; i < 2 * kMiB / 48 && small_blocks.size() < small_blocks.capacity(); ++i) {
      void* p = hs_malloc(48);
      if (p == nullptr) break;
      small_blocks.push_back(p);
    }
    for (void* m : room) munmap(m, 64 * 1024);

    // The profiler kept running through it and counts what it could not record.
    hs_prof_stats_t stats = hs_prof_stats_init();
    CHILD_CHECK(hs_prof_stats_get(&stats));
    CHILD_CHECK(stats.enabled);
    CHILD_CHECK(stats.dropped_no_memory > 0 && stats.dropped_samples >= stats.dropped_no_memory);
    std::fprintf(stderr,
                 "exhaustion: %zu MiB blocks and %zu small blocks before ENOMEM; "
                 "profiler: %llu samples dropped (%llu for memory)\n",
                 first_fill, small_blocks.size(),
                 static_cast<unsigned long long>(stats.dropped_samples),
                 static_cast<unsigned long long>(stats.dropped_no_memory));

    // Freed memory is served again under the same cap.
    for (void* p : small_blocks) hs_free(p);
    for (void* p : *blocks) hs_free(p);
    hs_collect(1);
    // ... and the profile says how many samples it lost.
    struct Text {
      std::string out;
      static bool append(void* arg, const void* data, size_t len) {
        static_cast<Text*>(arg)->out.append(static_cast<const char*>(data), len);
        return true;
      }
    } text;
    text.out.reserve(1 << 20);
    CHILD_CHECK(hs_prof_dump_writer(Text::append, &text));
    CHILD_CHECK(text.out.find("profiler_dropped_samples") != std::string::npos);
    fill_with_mib_blocks(&err);
    CHILD_CHECK(blocks->size() + 16 >= first_fill);
    for (void* p : *blocks) hs_free(p);

    // And once the cap is lifted, what failed before succeeds.
    CHILD_CHECK(lift_cap());
    void* big = hs_malloc(512 * kMiB);
    CHILD_CHECK(big != nullptr);
    std::memset(big, 1, 4096);
    hs_free(big);
    hs_prof_stop();
    return 0;
  });
}

// The OS refusing memory now and then (the fault_map_every option: every 3rd mapping request
// fails) in the middle of mixed traffic: each call either succeeds or returns NULL with ENOMEM
// (a failed realloc keeps its block), every live block keeps its content, and with the faults
// off again everything succeeds, huge blocks included.
TEST(Exhaustion, InjectedMapFailuresFailCleanlyAndTheEngineRecovers) {
  in_child([]() -> int {
    CHILD_CHECK(hs_prof_start(4096));
    struct Slot {
      unsigned char* p = nullptr;
      size_t size = 0;
    };
    static Slot slots[256];
    hs_test::SplitMix64 rng(77);
    hs_option_set(hs_option_fault_map_every, 3);
    size_t failures = 0, successes = 0;
    for (int i = 0; i < 20000; ++i) {
      Slot& s = slots[rng.next() % 256];
      size_t size = rng.next() % 8 == 0 ? rng.between(1 << 20, 12 << 20) : rng.between(1, 70000);
      if (s.p != nullptr) {
        CHILD_CHECK(s.p[0] == static_cast<unsigned char>(s.size) &&
                    s.p[s.size - 1] == static_cast<unsigned char>(s.size));
      }
      errno = 0;
      if (s.p == nullptr) {
        s.p = static_cast<unsigned char*>(hs_malloc(size));
        if (s.p == nullptr) {
          CHILD_CHECK(errno == ENOMEM);
          ++failures;
          continue;
        }
      } else if (rng.next() % 2 == 0) {
        auto* q = static_cast<unsigned char*>(hs_realloc(s.p, size));
        if (q == nullptr) {
          CHILD_CHECK(errno == ENOMEM);
          ++failures;
          continue;  // s.p is still the block, content checked next time
        }
        s.p = q;
      } else {
        hs_free(s.p);
        s = Slot{};
        continue;
      }
      ++successes;
      s.size = size;
      s.p[0] = s.p[size - 1] = static_cast<unsigned char>(size);
    }
    std::fprintf(stderr, "injected faults: %zu allocations failed, %zu succeeded\n", failures,
                 successes);
    CHILD_CHECK(failures > 0 && successes > failures);
    hs_option_set(hs_option_fault_map_every, 0);
    for (Slot& s : slots) {
      hs_free(s.p);
      s = Slot{};
    }
    for (int i = 0; i < 200; ++i) {
      size_t size = i % 20 == 0 ? 64 << 20 : rng.between(1, 2 << 20);
      void* p = hs_malloc(size);
      CHILD_CHECK(p != nullptr);
      std::memset(p, 1, size < 4096 ? size : 4096);
      hs_free(p);
    }
    hs_prof_stop();
    return 0;
  });
}

TEST(Exhaustion, ImpossibleSizesFailWithEnomemWithoutTouchingTheOs) {
  errno = 0;
  EXPECT_EQ(hs_malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_calloc(SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(hs_malloc_aligned(SIZE_MAX - 4096, 4096), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* p = hs_malloc(100);
  ASSERT_NE(p, nullptr);
  errno = 0;
  EXPECT_EQ(hs_realloc(p, SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  hs_free(p);
}

}  // namespace
