// The RSS stress workload: the run whose peak resident set compare.py measures per allocator.
//
// Each thread owns a table of slots. Over three phases it grows its live set to the full table,
// shrinks it to a tenth, and grows it again, replacing random slots (free + malloc). One free in
// eight is handed to the next thread through an SPSC ring, so every allocator also pays for
// remote frees. Sizes: 80% 16-256 B, 15% 256 B-4 KiB, 4.9% 4-64 KiB, 0.1% 64 KiB-1 MiB.
// Every block carries a pattern derived from its size, checked before it is freed.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "bench_support.h"

namespace hs_bench {
namespace {

constexpr size_t kRingCapacity = 4096;
using Ring = SpscRing<kRingCapacity>;

size_t draw_size(SplitMix64& rng) {
  const uint64_t r = rng.next() % 1000;
  if (r < 800) return rng.between(16, 256);
  if (r < 950) return rng.between(257, 4096);
  if (r < 999) return rng.between(4097, 65536);
  return rng.between(65537, 1 << 20);
}

unsigned char pattern_byte(size_t size) { return static_cast<unsigned char>((size * 131) >> 3); }

// A block starts with its size; a few bytes at the front and the last byte hold the pattern.
void* make_block(size_t size) {
  auto* p = static_cast<unsigned char*>(std::malloc(size));
  if (p == nullptr) std::abort();
  std::memcpy(p, &size, sizeof(size));
  const unsigned char b = pattern_byte(size);
  std::memset(p + sizeof(size), b, 8);
  p[size - 1] = b;
  return p;
}

bool block_ok(const void* block) {
  const auto* p = static_cast<const unsigned char*>(block);
  size_t size = 0;
  std::memcpy(&size, p, sizeof(size));
  if (size < 16 || size > (1 << 20)) return false;
  const unsigned char b = pattern_byte(size);
  for (size_t i = 0; i < 8; ++i) {
    if (p[sizeof(size) + i] != b) return false;
  }
  return p[size - 1] == b;
}

struct Worker {
  const RssStressConfig* config = nullptr;
  int index = 0;
  Ring* outgoing = nullptr;  // frees handed to the next thread
  Ring* incoming = nullptr;  // frees handed to us by the previous thread
  std::atomic<int>* producers_left = nullptr;
  size_t failures = 0;

  void free_checked(void* p) {
    if (!block_ok(p)) ++failures;
    std::free(p);
  }

  void drain_incoming() {
    void* p = nullptr;
    while (incoming->try_pop(&p)) free_checked(p);
  }

  void release(void* p, SplitMix64& rng) {
    if ((rng.next() & 7) == 0) {
      while (!outgoing->try_push(p)) drain_incoming();  // never deadlock on a full ring
    } else {
      free_checked(p);
    }
  }

  void run() {
    SplitMix64 rng(config->seed * 1000003 + static_cast<uint64_t>(index));
    const size_t slots = config->slots_per_thread;
    std::vector<void*> table(slots, nullptr);
    const size_t phase_ops = config->ops_per_thread / 3;
    // Phase targets: live set grows to all slots, falls to a tenth, then grows again.
    const size_t targets[3] = {slots, slots / 10, slots};
    size_t live = 0;
    for (size_t target : targets) {
      for (size_t op = 0; op < phase_ops; ++op) {
        const size_t i = rng.next() % slots;
        if (table[i] != nullptr) {
          release(table[i], rng);
          table[i] = nullptr;
          --live;
        }
        if (live < target) {
          table[i] = make_block(draw_size(rng));
          ++live;
        }
        if ((op & 255) == 0) drain_incoming();
      }
    }
    for (void*& p : table) {
      if (p != nullptr) release(p, rng);
      p = nullptr;
    }
    producers_left->fetch_sub(1, std::memory_order_acq_rel);
    // Keep draining until every producer is done, then once more.
    for (unsigned spins = 0; producers_left->load(std::memory_order_acquire) > 0; ++spins) {
      drain_incoming();
      backoff(spins);
    }
    drain_incoming();
  }
};

}  // namespace

size_t run_rss_stress(const RssStressConfig& config) {
  const int n = config.threads < 1 ? 1 : config.threads;
  std::vector<std::unique_ptr<Ring>> rings;
  rings.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) rings.push_back(std::make_unique<Ring>());
  std::atomic<int> left{n};
  std::vector<Worker> workers(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Worker& w = workers[static_cast<size_t>(i)];
    w.config = &config;
    w.index = i;
    w.outgoing = rings[static_cast<size_t>((i + 1) % n)].get();
    w.incoming = rings[static_cast<size_t>(i)].get();
    w.producers_left = &left;
  }
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i)
    threads.emplace_back([&workers, i] { workers[static_cast<size_t>(i)].run(); });
  workers[0].run();
  for (auto& t : threads) t.join();
  // A block pushed after its consumer's last drain is still in a ring: free it here.
  size_t failures = 0;
  for (auto& w : workers) {
    w.drain_incoming();
    failures += w.failures;
  }
  return failures;
}

}  // namespace hs_bench
