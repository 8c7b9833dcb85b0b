// Exactness against a counting reference: a seeded random sequence of allocation calls, with
// tracking switched off and on now and then, whose expected totals are computed here from the
// rules alone (a model of which blocks are tracked and their usable sizes) and compared with
// the snapshot after every step, and with the sum of the dispatched deltas.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>

#include "base/splitmix64.h"
#include "event_recorder.h"

namespace hs_events_test {
namespace {

struct Model {
  struct Block {
    uint64_t usable;
    bool tracked;
  };
  std::map<void*, Block> blocks;
  bool on = false;
  uint64_t live_bytes = 0, live_count = 0, accum_bytes = 0, accum_count = 0;

  void enable() {
    if (!on) {
      for (auto& entry : blocks) entry.second.tracked = false;  // a new period
      live_bytes = live_count = 0;
    }
    on = true;
  }
  void allocated(void* p) {
    uint64_t usable = hs_usable_size(p);
    blocks[p] = Block{usable, on};
    if (!on) return;
    live_bytes += usable;
    live_count++;
    accum_bytes += usable;
    accum_count++;
  }
  void freed(void* p) {
    Block b = blocks.at(p);
    blocks.erase(p);
    if (on && b.tracked) {
      live_bytes -= b.usable;
      live_count--;
    }
  }
  void resized(void* p, void* q) {
    Block b = blocks.at(p);
    blocks.erase(p);
    if (!on) {
      blocks[q] = Block{hs_usable_size(q), false};
      return;
    }
    if (!b.tracked) return allocated(q);
    uint64_t usable = hs_usable_size(q);
    blocks[q] = Block{usable, true};
    live_bytes += usable - b.usable;
    if (usable > b.usable) accum_bytes += usable - b.usable;
  }
};

int64_t g_delta_sum = 0;
void sum_deltas(const hs_memory_change_t* change, void*) { g_delta_sum += change->delta_bytes; }

TEST(MemoryEventsExactness, SeededSequenceMatchesTheReference) {
  if (!kEventsOn) GTEST_SKIP() << "events compiled out";
  hs_memory_events_set_enabled(false);
  for (int k = 0; k < HS_MEMORY_CHANGE_KINDS; k++) {
    hs_memory_events_set_callback(static_cast<hs_memory_change_kind_t>(k), sum_deltas, nullptr);
  }
  heapscope::base::SplitMix64 rng(20261201);
  Model model;
  void* slots[128] = {};
  hs_memory_snapshot_t base = take_snapshot();
  int64_t period_delta_base = 0;
  for (int step = 0; step < 60000; step++) {
    uint64_t roll = rng.next();
    size_t i = (roll >> 8) % 128;
    size_t size = (roll >> 20) % 4 == 0 ? (roll >> 24) % 300000 : (roll >> 24) % 1024;
    switch (roll % 16) {
      case 0:
        if (roll % 1024 == 0) {
          bool was = hs_memory_events_set_enabled(!model.on);
          ASSERT_EQ(was, model.on);
          if (model.on) {
            model.on = false;
          } else {
            model.enable();
            period_delta_base = g_delta_sum;
          }
        }
        break;
      case 1:
      case 2:
      case 3:
      case 4:
        if (slots[i] != nullptr) {
          model.freed(slots[i]);
          hs_free(slots[i]);
          slots[i] = nullptr;
        }
        break;
      case 5:
      case 6:
        if (slots[i] != nullptr) {
          void* q = hs_realloc(slots[i], size + 1);
          ASSERT_NE(q, nullptr);
          model.resized(slots[i], q);
          slots[i] = q;
        }
        break;
      case 7:
        if (slots[i] != nullptr) {
          void* q = hs_expand(slots[i], size + 1);
          if (q != nullptr) model.resized(slots[i], q);
        }
        break;
      default:
        if (slots[i] == nullptr) {
          switch (roll % 5) {
            case 0:
              slots[i] = hs_calloc(1, size);
              break;
            case 1:
              slots[i] = hs_malloc_aligned(size, size_t{16} << (roll >> 60) % 8);
              break;
            case 2:
              slots[i] = hs_realloc(nullptr, size);
              break;
            default:
              slots[i] = hs_malloc(size);
          }
          ASSERT_NE(slots[i], nullptr);
          model.allocated(slots[i]);
        }
    }
    if (model.on) {
      hs_memory_snapshot_t s = take_snapshot();
      ASSERT_EQ(s.live_bytes, model.live_bytes) << "step " << step;
      ASSERT_EQ(s.live_count, model.live_count) << "step " << step;
      ASSERT_EQ(s.accum_bytes - base.accum_bytes, model.accum_bytes) << "step " << step;
      ASSERT_EQ(s.accum_count - base.accum_count, model.accum_count) << "step " << step;
      ASSERT_EQ(g_delta_sum - period_delta_base, static_cast<int64_t>(model.live_bytes));
      ASSERT_LT(s.live_bytes, uint64_t{1} << 62);  // never wrapped
    }
  }
  hs_memory_events_set_enabled(false);
  for (int k = 0; k < HS_MEMORY_CHANGE_KINDS; k++) {
    hs_memory_events_set_callback(static_cast<hs_memory_change_kind_t>(k), nullptr, nullptr);
  }
  for (void* p : slots) hs_free(p);
}

}  // namespace
}  // namespace hs_events_test
