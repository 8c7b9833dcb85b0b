// Fuzz target: random sequences of hs_* calls on a small table of live blocks. Every block
// carries a fill pattern derived from its slot, checked before every free/realloc, so a
// corrupted free list, an overlapping block or a bad realloc copy shows up as a crash here.
// Oracles: content (the fill, and a realloc keeps the prefix), zeroing (calloc/zalloc blocks,
// and what rezalloc/recalloc add to them, read zero), alignment. The realloc family, first-class
// heaps, and frees from a helper thread (cross-thread frees) are all in the mix.
// Built as a libFuzzer target by the `fuzz` preset (clang-14), and with a seeded driver
// (fuzz_driver.cc) in every other build so CI runs the same code.
#include <heapscope/heapscope.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "fuzz_input.h"

namespace {

constexpr size_t kSlots = 64;

struct Live {
  unsigned char* p = nullptr;
  size_t size = 0;
  unsigned char fill = 0;
  // Allocated zeroed and only resized by the zeroing calls: every byte past `size` reads 0.
  bool zero_tail = false;
};

// Frees blocks handed to it on its own thread (a remote free for their owner). One thread for
// the process; drain() waits until everything handed over is freed (before a heap goes away).
class RemoteFreer {
 public:
  void hand_over(void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    start_once();
    queue_.push_back(p);
    wake_.notify_one();
  }
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
  }

 private:
  void start_once() {
    if (started_) return;
    started_ = true;
    std::thread([this] { run(); }).detach();
  }
  [[noreturn]] void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return !queue_.empty(); });
      void* p = queue_.front();
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      hs_free(p);
      lock.lock();
      busy_ = false;
      if (queue_.empty()) idle_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<void*> queue_;
  bool started_ = false;
  bool busy_ = false;
};

RemoteFreer& remote_freer() {
  static auto* freer = new RemoteFreer;  // never destroyed: its thread runs to process exit
  return *freer;
}

using Input = heapscope::fuzz::FuzzInput;

// Both ends in full and every 61st byte between: catches overlap and bad copies without
// making multi-megabyte blocks dominate the run time.
bool intact(const unsigned char* p, size_t size, unsigned char expected) {
  for (size_t i = 0; i < size; i = (i < 64 || i + 64 >= size) ? i + 1 : i + 61) {
    if (p[i] != expected) return false;
  }
  return true;
}

void check(const Live& b) {
  if (!intact(b.p, b.size, b.fill)) abort();
}

void fill(Live& b, unsigned char value) {
  b.fill = value;
  memset(b.p, value, b.size);
}

// The same sampling as intact(): a byte-by-byte check of multi-megabyte growth made every
// input cost tens of milliseconds under coverage instrumentation.
bool zero(const unsigned char* p, size_t from, size_t to) {
  return to <= from || intact(p + from, to - from, 0);
}

// A resized block: the first `keep` bytes are the old fill; `n` is its new size.
void resized(Live& b, unsigned char* q, size_t n, bool zero_tail, unsigned char value) {
  size_t keep = n < b.size ? n : b.size;
  if (!intact(q, keep, b.fill)) abort();
  if (zero_tail && b.zero_tail && n > b.size && !zero(q, b.size, n)) abort();
  b.p = q;
  b.size = n;
  b.zero_tail = zero_tail && b.zero_tail;
  fill(b, value);
}

size_t draw_size(Input& in) {
  switch (in.take(1) % 4) {
    case 0:
      return in.take(1);  // tiny, including 0
    case 1:
      return in.take(2) % 4096;  // small/medium
    case 2:
      return in.take(3) % (256u << 10);  // up to 256 KiB
    default:                             // up to 1 MiB, and now and then into huge
      return in.take(1) % 8 == 0 ? in.take(3) % (5u << 20) : in.take(3) % (1u << 20);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in{data, size};
  Live live[kSlots];
  hs_heap_t* heap = nullptr;
  while (in.left > 0) {
    uint64_t op = in.take(1);
    Live& b = live[in.take(1) % kSlots];
    unsigned char value = static_cast<unsigned char>(op * 31 + 7);
    switch (op % 13) {
      case 0:
      case 1: {  // malloc / calloc / aligned into an empty slot
        if (b.p != nullptr) break;
        size_t n = draw_size(in);
        if (op % 3 == 0) {
          b.p = static_cast<unsigned char*>(hs_calloc(1, n));
          if (b.p != nullptr && !intact(b.p, n, 0)) abort();
        } else if (op % 3 == 1) {
          size_t align = size_t{1} << (in.take(1) % 21);
          b.p = static_cast<unsigned char*>(hs_malloc_aligned(n, align));
          if (b.p != nullptr && reinterpret_cast<uintptr_t>(b.p) % align != 0) abort();
        } else {
          b.p =
              static_cast<unsigned char*>(heap != nullptr ? hs_heap_malloc(heap, n) : hs_malloc(n));
        }
        if (b.p == nullptr) break;
        if (hs_usable_size(b.p) < n) abort();
        b.size = n;
        b.zero_tail = op % 3 == 0;
        fill(b, value);
        break;
      }
      case 2:
      case 3:  // free
        if (b.p == nullptr) break;
        check(b);
        hs_free(b.p);
        b = Live{};
        break;
      case 4: {  // realloc keeps the prefix
        if (b.p == nullptr) break;
        check(b);
        size_t n = draw_size(in);
        auto* q = static_cast<unsigned char*>(hs_realloc(b.p, n));
        if (n == 0) {
          b = Live{};
          break;
        }
        if (q == nullptr) break;  // b still valid
        resized(b, q, n, false, value);
        break;
      }
      case 5:  // expand in place or not at all
        if (b.p == nullptr) break;
        if (void* q = hs_expand(b.p, draw_size(in)); q != nullptr) {
          if (q != b.p) abort();
          b.zero_tail = false;  // the usable room it added is not zeroed
        }
        check(b);
        break;
      case 6:                    // a first-class heap comes and goes (delete migrates its blocks)
        remote_freer().drain();  // no block of it may still be on its way to a free
        if (heap == nullptr) {
          heap = hs_heap_new();
        } else {
          hs_heap_delete(heap);
          heap = nullptr;
        }
        break;
      case 7:
        hs_collect(static_cast<int>(op & 16));
        break;
      case 9: {  // the rest of the realloc family keeps the prefix (and the alignment)
        if (b.p == nullptr) break;
        check(b);
        size_t n = draw_size(in);
        size_t align = size_t{1} << (in.take(1) % 16);
        unsigned char* q = nullptr;
        if (op % 3 == 0) {
          q = static_cast<unsigned char*>(hs_realloc_aligned(b.p, n, align));
          if (q != nullptr && reinterpret_cast<uintptr_t>(q) % align != 0) abort();
        } else if (op % 3 == 1) {
          size_t count = (in.take(1) % 8) + 1;
          n /= count;
          q = static_cast<unsigned char*>(hs_reallocarray(b.p, count, n));
          n *= count;
        } else {
          q = static_cast<unsigned char*>(
              hs_heap_realloc(heap != nullptr ? heap : hs_heap_get_default(), b.p, n));
        }
        if (q == nullptr) {
          if (n == 0) b = Live{};  // a zero-size realloc may free
          break;
        }
        resized(b, q, n, false, value);
        break;
      }
      case 10: {  // the zeroing family: zeroed blocks, and zeroed growth of them
        size_t n = draw_size(in);
        if (b.p == nullptr) {
          size_t align = size_t{1} << (in.take(1) % 16);
          switch (op % 4) {
            case 0:
              b.p = static_cast<unsigned char*>(hs_zalloc_aligned(n, align));
              break;
            case 1:
              b.p = static_cast<unsigned char*>(hs_calloc_aligned(1, n, align));
              break;
            case 2:
              b.p = static_cast<unsigned char*>(heap != nullptr ? hs_heap_zalloc(heap, n)
                                                                : hs_zalloc(n));
              align = 1;
              break;
            default:
              b.p = static_cast<unsigned char*>(heap != nullptr ? hs_heap_calloc(heap, 1, n)
                                                                : hs_calloc(n, 1));
              align = 1;
          }
          if (b.p == nullptr) break;
          if (reinterpret_cast<uintptr_t>(b.p) % align != 0 || !zero(b.p, 0, n)) abort();
          b.size = n;
          b.zero_tail = true;
          fill(b, value);
          break;
        }
        check(b);
        unsigned char* q = nullptr;
        switch (op % 3) {
          case 0:
            q = static_cast<unsigned char*>(hs_rezalloc(b.p, n));
            break;
          case 1:
            q = static_cast<unsigned char*>(hs_recalloc(b.p, n, 1));
            break;
          default:
            q = static_cast<unsigned char*>(hs_rezalloc_aligned(b.p, n, 64));
        }
        if (q == nullptr) {
          if (n == 0) b = Live{};
          break;
        }
        if (op % 3 == 2 && reinterpret_cast<uintptr_t>(q) % 64 != 0) abort();
        resized(b, q, n, true, value);
        break;
      }
      case 11:  // freed by another thread
        if (b.p == nullptr) break;
        check(b);
        remote_freer().hand_over(b.p);
        b = Live{};
        break;
      default: {  // statistics stay consistent
        hs_stats_t s{};
        s.size = sizeof s;
        s.version = HS_STATS_VERSION;
        if (hs_stats_get(&s) != 0 || s.free_count > s.alloc_count) abort();
        break;
      }
    }
  }
  for (Live& b : live) {
    if (b.p != nullptr) {
      check(b);
      hs_free_sized(b.p, b.size);
    }
  }
  remote_freer().drain();
  if (heap != nullptr) hs_heap_destroy(heap);
  return 0;
}
