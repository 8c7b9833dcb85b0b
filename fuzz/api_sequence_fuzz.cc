// Fuzz target: random sequences of hs_* calls on a small table of live blocks. Every block
// carries a fill pattern derived from its slot, checked before every free/realloc, so a
// corrupted free list, an overlapping block or a bad realloc copy shows up as a crash here.
// Built as a libFuzzer target by the `fuzz` preset (clang-14), and with a seeded driver
// (fuzz_driver.cc) in every other build so CI runs the same code.
#include <heapscope/heapscope.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "fuzz_input.h"

namespace {

constexpr size_t kSlots = 64;

struct Live {
  unsigned char* p = nullptr;
  size_t size = 0;
  unsigned char fill = 0;
};

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
    switch (op % 9) {
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
        size_t keep = n < b.size ? n : b.size;
        if (!intact(q, keep, b.fill)) abort();
        b.p = q;
        b.size = n;
        fill(b, value);
        break;
      }
      case 5:  // expand in place or not at all
        if (b.p == nullptr) break;
        if (void* q = hs_expand(b.p, draw_size(in)); q != nullptr && q != b.p) abort();
        check(b);
        break;
      case 6:  // a first-class heap comes and goes (delete migrates its blocks)
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
      hs_free(b.p);
    }
  }
  if (heap != nullptr) hs_heap_destroy(heap);
  return 0;
}
