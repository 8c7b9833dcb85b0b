// The scene of the tests of which running thread takes over the resident memory an exited
// thread left (core/thread.cc, reclaim_abandoned_resident): with the threads started apart
// (stress/thread_rounds_test.cc) and together through the pthread_create wrapper
// (override/thread_batch_test.cc).
#pragma once

#include <heapscope/heapscope.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "test_support.h"

namespace hs_test {

inline constexpr uintptr_t kSegmentBytes = uintptr_t{32} * kMiB;  // segments are aligned to it
inline uintptr_t segment_of(const void* p) {
  return reinterpret_cast<uintptr_t>(p) & ~(kSegmentBytes - 1);
}

// A first thread takes a segment of its own; a second, started `gap` after it, makes 12 MiB
// of 256 KiB buffers, frees them and exits with one small block still live (its segment is
// abandoned as it is, megabytes free and resident); then the first makes eight such buffers
// and, while it holds them, `meanwhile` runs on the calling thread. Returns the exited
// thread's segment and those of the first's buffers.
struct TakeoverScene {
  uintptr_t exited_segment = 0;
  std::vector<uintptr_t> first_thread_buffers;
};
template <class Meanwhile>
inline TakeoverScene run_takeover_scene(std::chrono::milliseconds gap, Meanwhile&& meanwhile) {
  ScopedPurgeDelays long_delays(1000, 10000);
  hs_collect(1);  // nothing abandoned: the second thread's segment is the only one
  constexpr size_t kBuffer = 256 * 1024;
  // 1: the first thread has a segment; 2: the second exited; 3: the first made its buffers;
  // 4: `meanwhile` ran.
  std::atomic<int> stage{0};
  void* kept = nullptr;
  std::vector<void*> first_buffers;
  std::thread first([&] {
    void* own = hs_malloc(100);
    stage.store(1);
    while (stage.load() < 2) std::this_thread::yield();
    for (int i = 0; i < 8; ++i) first_buffers.push_back(hs_malloc(kBuffer));
    stage.store(3);
    while (stage.load() < 4) std::this_thread::yield();
    for (void* p : first_buffers) hs_free(p);
    hs_free(own);
  });
  while (stage.load() < 1) std::this_thread::yield();
  std::this_thread::sleep_for(gap);
  std::thread second([&] {
    kept = hs_malloc(100);
    std::vector<void*> buffers;
    for (int i = 0; i < 48; ++i) {
      buffers.push_back(hs_malloc(kBuffer));
      std::memset(buffers.back(), 1, kBuffer);
    }
    for (void* p : buffers) hs_free(p);
  });
  second.join();
  stage.store(2);
  while (stage.load() < 3) std::this_thread::yield();
  meanwhile();
  stage.store(4);
  first.join();
  TakeoverScene scene;
  scene.exited_segment = segment_of(kept);
  for (void* p : first_buffers) scene.first_thread_buffers.push_back(segment_of(p));
  hs_free(kept);
  return scene;
}

}  // namespace hs_test
