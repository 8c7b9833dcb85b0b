// Fuzz target: random hs_* call sequences with memory-events tracking switched on and off,
// first-class heaps created, deleted and destroyed, and a callback that allocates. A model of
// the tracked blocks (which slots were allocated in the current tracking period, and their
// usable sizes) predicts live bytes and count after every call; the snapshot must match it,
// never wrap, and agree with the sum of the dispatched deltas.
#include <heapscope/heapscope.h>
#include <heapscope/memory_events.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz_input.h"

namespace {

constexpr size_t kSlots = 48;

struct Slot {
  void* p = nullptr;
  uint64_t usable = 0;
  bool tracked = false;
  bool in_heap = false;  // allocated from the live first-class heap
};

using Input = heapscope::fuzz::FuzzInput;

struct Model {
  Slot slots[kSlots];
  bool on = false;
  uint64_t live_bytes = 0;
  uint64_t live_count = 0;

  void enable(bool want) {
    if (want && !on) {
      for (Slot& s : slots) s.tracked = false;  // a new period forgets earlier blocks
      live_bytes = live_count = 0;
    }
    on = want;
  }
  void added(Slot& s, void* p, bool in_heap) {
    s = Slot{p, hs_usable_size(p), on, in_heap};
    if (on) {
      live_bytes += s.usable;
      live_count++;
    }
  }
  void removed(Slot& s) {
    if (on && s.tracked) {
      live_bytes -= s.usable;
      live_count--;
    }
    s = Slot{};
  }
  void resized(Slot& s, void* q) {
    bool in_heap = s.in_heap && q == s.p;  // a moved block goes to the thread's own heap
    if (!on || !s.tracked) {
      uint64_t usable = hs_usable_size(q);
      bool was_on = on;
      s = Slot{q, usable, false, in_heap};
      if (was_on) {  // an unknown block resized while on: counted as an allocation
        s.tracked = true;
        live_bytes += usable;
        live_count++;
      }
      return;
    }
    uint64_t usable = hs_usable_size(q);
    live_bytes += usable - s.usable;
    s.p = q;
    s.usable = usable;
    s.in_heap = in_heap;
  }
};

int64_t g_delta_sum = 0;
void on_change(const hs_memory_change_t* change, void*) {
  g_delta_sum += change->delta_bytes;
  // Callbacks may allocate; this traffic must stay out of the figures.
  void* p = hs_malloc(static_cast<size_t>(change->request_size % 512));
  hs_free(p);
}

size_t draw_size(Input& in) {
  switch (in.take(1) % 3) {
    case 0:
      return in.take(1);
    case 1:
      return in.take(2) % 8192;
    default:
      return in.take(1) % 8 == 0 ? in.take(3) % (5u << 20) : in.take(3) % (300u << 10);
  }
}

void check(const Model& m, int64_t delta_base) {
  if (!m.on) return;
  hs_memory_snapshot_t s{};
  s.size = sizeof s;
  s.version = HS_MEMORY_SNAPSHOT_VERSION;
  if (!hs_memory_events_snapshot(&s)) abort();
  if (s.live_bytes != m.live_bytes || s.live_count != m.live_count) abort();
  if (g_delta_sum - delta_base != static_cast<int64_t>(m.live_bytes)) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!hs_memory_events_available()) return 0;
  Input in{data, size};
  Model m;
  hs_memory_events_set_enabled(false);
  for (int k = 0; k < HS_MEMORY_CHANGE_KINDS; k++) {
    hs_memory_events_set_callback(static_cast<hs_memory_change_kind_t>(k), on_change, nullptr);
  }
  int64_t delta_base = g_delta_sum;
  hs_heap_t* heap = nullptr;
  while (in.left > 0) {
    uint64_t op = in.take(1);
    Slot& s = m.slots[in.take(1) % kSlots];
    switch (op % 8) {
      case 0:  // tracking on/off
        if (hs_memory_events_set_enabled(!m.on) != m.on) abort();
        if (!m.on) delta_base = g_delta_sum;
        m.enable(!m.on);
        break;
      case 1:
      case 2: {
        if (s.p != nullptr) break;
        size_t n = draw_size(in);
        void* p;
        bool in_heap = false;
        switch (op % 4) {
          case 0:
            p = hs_calloc(1, n);
            break;
          case 1:
            p = hs_malloc_aligned(n, size_t{1} << (in.take(1) % 17));
            break;
          case 2:
            in_heap = heap != nullptr;
            p = in_heap ? hs_heap_malloc(heap, n) : hs_malloc(n);
            break;
          default:
            p = hs_realloc(nullptr, n);
        }
        if (p != nullptr) m.added(s, p, in_heap);
        break;
      }
      case 3:
        if (s.p == nullptr) break;
        hs_free(s.p);
        m.removed(s);
        break;
      case 4: {
        if (s.p == nullptr) break;
        size_t n = draw_size(in);
        void* q = hs_realloc(s.p, n);
        if (n == 0) {
          m.removed(s);
        } else if (q != nullptr) {
          m.resized(s, q);
        }
        break;
      }
      case 5:
        if (s.p == nullptr) break;
        if (void* q = hs_expand(s.p, draw_size(in)); q != nullptr) m.resized(s, q);
        break;
      case 6:  // a first-class heap: created, deleted (blocks live on) or destroyed
        if (heap == nullptr) {
          heap = hs_heap_new();
        } else if (op & 8) {
          hs_heap_delete(heap);
          heap = nullptr;
          for (Slot& t : m.slots) t.in_heap = false;
        } else {
          hs_heap_destroy(heap);
          heap = nullptr;
          for (Slot& t : m.slots) {
            if (t.in_heap) m.removed(t);
          }
        }
        break;
      default: {
        size_t seen = 0;
        if (m.on && !hs_memory_events_visit(
                        [](void*, size_t, void* arg) {
                          ++*static_cast<size_t*>(arg);
                          return true;
                        },
                        &seen)) {
          abort();
        }
        if (m.on && seen != m.live_count) abort();
        break;
      }
    }
    check(m, delta_base);
  }
  for (Slot& s : m.slots) {
    if (s.p != nullptr && !s.in_heap) hs_free(s.p);
  }
  if (heap != nullptr) hs_heap_destroy(heap);
  hs_memory_events_set_enabled(false);
  for (int k = 0; k < HS_MEMORY_CHANGE_KINDS; k++) {
    hs_memory_events_set_callback(static_cast<hs_memory_change_kind_t>(k), nullptr, nullptr);
  }
  return 0;
}
