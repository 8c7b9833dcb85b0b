// The program-shaped rows: the allocation patterns of public benchmark programs, as timed rows
// and as memory rows (each run in a process of its own, so its peak RSS is its own).
//
//   rounds        threads created in rounds; each allocates objects, frees the ones the
//                 previous round's other thread left in its slots, keeps a quarter alive
//                 across rounds (the pattern of mimalloc-bench's mstress)
//   large_reuse   buffers of 4-32 MiB allocated, every page written, freed, again and again
//                 (malloc-large): the cost of faulting the pages in each time
//   mixed_live    a 20 000-block live set (78% 8-128 B, 20% 128 B-2 KiB, 2% 2-32 KiB, 1 in
//                 2000 up to 1 MiB) churned by replacing random blocks
//   pool          a pool of threads re-created for each batch of work: all of a round's
//                 threads start at once, free their share of the last round's leftovers, make
//                 ~11 MB of mixed blocks up to 1 MiB each and leave a tenth for the next round
//   startup       nothing: the resident cost of starting the allocator (memory row only)
//
// Every block carries its size in its first word, checked before it is freed.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"

namespace hs_bench {
namespace {

void* make_block(size_t size) {
  auto* p = static_cast<unsigned char*>(std::malloc(size));
  if (p == nullptr) std::abort();
  std::memcpy(p, &size, sizeof size);
  return p;
}

// Frees a block made by make_block; false when its first word no longer holds its size.
bool free_block(void* p, size_t size) {
  size_t stored;
  std::memcpy(&stored, p, sizeof stored);
  std::free(p);
  return stored == size;
}

}  // namespace

size_t rounds_run(int rounds, int threads, size_t objects_per_thread, uint64_t seed) {
  // slots[t] is written by thread t of a round and emptied by thread t+1 of the next one.
  std::vector<std::vector<SizedBlock>> slots(static_cast<size_t>(threads),
                                             std::vector<SizedBlock>(objects_per_thread));
  std::atomic<size_t> failures{0};
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t, round] {
        SplitMix64 rng(seed ^ (static_cast<uint64_t>(round) << 20) ^ static_cast<uint64_t>(t));
        std::vector<SizedBlock>& inherited = slots[static_cast<size_t>((t + 1) % threads)];
        std::vector<SizedBlock>& own = slots[static_cast<size_t>(t)];
        // Take over the other thread's leftovers first (remote frees), then fill its slots.
        for (size_t i = 0; i < objects_per_thread; i += 2) {
          SizedBlock& s = inherited[i];
          if (s.block != nullptr && !free_block(s.block, s.size)) failures.fetch_add(1);
          s.block = nullptr;
        }
        for (size_t i = 1; i < objects_per_thread; i += 2) {
          size_t size = rng.below(64) == 0 ? rng.between(1025, 16384) : rng.between(8, 1024);
          void* p = make_block(size);
          // A quarter stays alive across the round, the rest dies before the thread exits.
          if (rng.below(4) == 0) {
            SizedBlock& s = own[i];
            if (s.block != nullptr && !free_block(s.block, s.size)) failures.fetch_add(1);
            s = SizedBlock{p, size};
          } else if (!free_block(p, size)) {
            failures.fetch_add(1);
          }
        }
      });
    }
    for (std::thread& w : workers) w.join();
    // Hand the even slots to the next round's other thread.
    for (int t = 0; t < threads; ++t) {
      std::vector<SizedBlock>& own = slots[static_cast<size_t>(t)];
      for (size_t i = 0; i + 1 < objects_per_thread; i += 2) std::swap(own[i], own[i + 1]);
    }
  }
  for (auto& table : slots) {
    for (SizedBlock& s : table) {
      if (s.block != nullptr && !free_block(s.block, s.size)) failures.fetch_add(1);
      s.block = nullptr;
    }
  }
  return failures.load();
}

size_t large_reuse_run(int buffers, uint64_t seed) {
  SplitMix64 rng(seed);
  const long page = sysconf(_SC_PAGESIZE);
  size_t failures = 0;
  const auto step = static_cast<uintptr_t>(page);
  for (int i = 0; i < buffers; ++i) {
    size_t size = rng.between(4u << 20, 32u << 20);
    auto* p = static_cast<unsigned char*>(make_block(size));
    // A byte in the middle of every page the buffer covers (past the size it stores in its
    // first bytes). At the same place in each page, whatever the block's offset in its first
    // page: a touch that faults nothing costs more near a page's edges than mid-page on the
    // machines measured (one buffer at page offsets 0, 64 or 4032: 48-51 us; at 1024 or
    // 2048: 34-38 us), and allocators start a buffer at different offsets (glibc 16 or
    // 3776 B into a page, jemalloc at a random cache line of it, heapscope, tcmalloc and
    // mimalloc at 0), which the row then measured instead of the faults a reuse costs.
    const auto start = reinterpret_cast<uintptr_t>(p);
    uintptr_t at = (start & ~(step - 1)) + step / 2;
    if (at < start + sizeof size) at += step;
    for (; at < start + size; at += step) p[at - start] = static_cast<unsigned char>(at);
    if (!free_block(p, size)) ++failures;
  }
  return failures;
}

MixedLiveSet::MixedLiveSet(size_t blocks, uint64_t seed) : rng_(seed), slots_(blocks) {
  for (SizedBlock& s : slots_) {
    s.size = mixed_size(rng_);
    s.block = make_block(s.size);
  }
}

MixedLiveSet::~MixedLiveSet() { release(); }

bool MixedLiveSet::replace_one() {
  SizedBlock& s = slots_[rng_.below(slots_.size())];
  bool ok = free_block(s.block, s.size);
  s.size = mixed_size(rng_);
  s.block = make_block(s.size);
  return ok;
}

size_t MixedLiveSet::release() {
  size_t failures = 0;
  for (SizedBlock& s : slots_) {
    if (s.block != nullptr && !free_block(s.block, s.size)) ++failures;
    s.block = nullptr;
  }
  return failures;
}

namespace {
size_t pool_size(SplitMix64& rng) {
  const uint64_t roll = rng.below(100);
  if (roll < 70) return rng.between(16, 256);
  if (roll < 95) return rng.between(257, 4096);
  if (roll < 99) return rng.between(4097, 65536);
  return rng.between(65537, 1 << 20);
}
}  // namespace

PoolRounds::PoolRounds(int threads, size_t blocks_per_thread, uint64_t seed)
    : threads_(threads), blocks_per_thread_(blocks_per_thread), seed_(seed) {}

PoolRounds::~PoolRounds() { release(); }

size_t PoolRounds::run_round() {
  std::atomic<size_t> failures{0};
  std::vector<SizedBlock> last;  // every thread's leftovers of the last round
  last.swap(left_);
  std::mutex left_lock;
  std::vector<std::thread> workers;
  const uint64_t round = round_++;
  for (int t = 0; t < threads_; ++t) {
    workers.emplace_back([&, t] {
      SplitMix64 rng(seed_ ^ (round << 20) ^ static_cast<uint64_t>(t));
      // Its share of the last round's leftovers first, every threads_-th block: frees into
      // every exited thread's segment, some taken over already by this round's threads.
      for (size_t i = static_cast<size_t>(t); i < last.size(); i += static_cast<size_t>(threads_)) {
        if (!free_block(last[i].block, last[i].size)) failures.fetch_add(1);
      }
      std::vector<SizedBlock> made(blocks_per_thread_);
      for (SizedBlock& b : made) {
        b.size = pool_size(rng);
        b.block = make_block(b.size);
        // Every byte written (past the size word): a block's pages are the program's to use.
        std::memset(static_cast<unsigned char*>(b.block) + sizeof(size_t), 0x5a,
                    b.size - sizeof(size_t));
      }
      std::vector<SizedBlock> kept;
      for (size_t i = 0; i < made.size(); ++i) {
        if (i % 10 == 0) {
          kept.push_back(made[i]);
        } else if (!free_block(made[i].block, made[i].size)) {
          failures.fetch_add(1);
        }
      }
      std::lock_guard<std::mutex> hold(left_lock);
      left_.insert(left_.end(), kept.begin(), kept.end());
    });
  }
  for (std::thread& w : workers) w.join();
  return failures.load();
}

size_t PoolRounds::release() {
  size_t failures = 0;
  for (SizedBlock& b : left_) failures += free_block(b.block, b.size) ? 0 : 1;
  left_.clear();
  return failures;
}

size_t status_kib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0)
      return std::strtoull(line.c_str() + std::strlen(field), nullptr, 10);
  }
  return 0;
}

int run_memory_row(const std::string& row, bool smoke) {
  size_t failures = 0;
  const int scale = smoke ? 10 : 1;
  if (row == "rounds") {
    failures = rounds_run(100 / scale, 2, 4000, 7);
  } else if (row == "large_reuse") {
    failures = large_reuse_run(64 / scale, 7);
  } else if (row == "mixed_live") {
    MixedLiveSet set(20000, 7);
    for (int i = 0; i < 2000000 / scale; ++i) failures += set.replace_one() ? 0 : 1;
    failures += set.release();
  } else if (row == "pool") {
    PoolRounds pool(8, 1500, 7);
    for (int i = 0; i < 30 / scale; ++i) failures += pool.run_round();
    failures += pool.release();
  } else if (row == "startup") {
    std::free(make_block(16));
  } else {
    std::fprintf(stderr,
                 "hs-alloc-bench: unknown memory row '%s' (rounds, large_reuse, "
                 "mixed_live, pool, startup)\n",
                 row.c_str());
    return 2;
  }
  // Right after the work drains, and after a second with no allocator call at all: what an
  // idle process keeps.
  const size_t drained = status_kib("VmRSS:");
  std::this_thread::sleep_for(std::chrono::seconds(smoke ? 0 : 1));
  const size_t idle = status_kib("VmRSS:");
  std::printf(
      "{\"row\": \"%s\", \"peak_kib\": %zu, \"drained_kib\": %zu, \"idle_kib\": %zu, "
      "\"failures\": %zu}\n",
      row.c_str(), status_kib("VmHWM:"), drained, idle, failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace hs_bench
