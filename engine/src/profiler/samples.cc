// Sample records: the life cycle of a sampled block from the sample to its free. A record is
// tracked in the table and marked in its page (a bitmap bit, or the page flag alone for a
// page of one block), so a free into a flagged page finds it; in-place resizes update it and
// a destroyed heap drops its records at once.
#include "profiler/interval_dumps.h"
#include "profiler/peak.h"
#include "profiler/prof_internal.h"

namespace heapscope {

using namespace prof;

namespace {

// One bit per block; the most blocks a page holds is a one-slice page of 16-byte blocks.
constexpr size_t kBitmapBits = kSliceSize / kMinAlign;
constexpr size_t kBitmapBytes = kBitmapBits / 8;

uint64_t* page_bitmap(Page* page) {
  uint64_t* bitmap = page->sample_bits.load(std::memory_order_acquire);
  if (bitmap != nullptr) return bitmap;
  // The bitmaps share the session budget with records and stacks.
  uint64_t budget = g_memory.budget();
  if (budget != 0 && g_memory.committed() + g_bitmap_memory.in_use() + kBitmapBytes > budget) {
    return nullptr;
  }
  bitmap = static_cast<uint64_t*>(g_bitmap_memory.allocate(kBitmapBytes));
  if (bitmap == nullptr) return nullptr;
  for (size_t i = 0; i < kBitmapBytes / 8; ++i) bitmap[i] = 0;
  page->sample_bits.store(bitmap, std::memory_order_release);
  return bitmap;
}

}  // namespace

namespace prof {

// Puts a filled-in record into the table and marks its block in the page (bitmap bit, or the
// flag alone for a page of one block: huge, large, a sample's own page). Caller holds the
// lock. False (nothing changed) without memory.
bool track_record(Record* record) {
  void* p = reinterpret_cast<void*>(record->address);
  Page* page = page_of(p);
  if (page == nullptr) return false;
  record->page = page;
  record->bitmap = nullptr;
  record->bit = 0;
  if (!page_holds_one_block(page)) {
    if (page->reserved > kBitmapBits) return false;
    uint64_t* bitmap = page_bitmap(page);
    if (bitmap == nullptr) return false;
    record->bitmap = bitmap;
    record->bit = static_cast<uint32_t>((static_cast<uint8_t*>(p) - page->area) / page->block_size);
  }
  if (!record_insert(record)) return false;
  if (record->bitmap != nullptr) {
    __atomic_fetch_or(&record->bitmap[record->bit / 64], uint64_t{1} << (record->bit % 64),
                      __ATOMIC_RELEASE);
  }
  page->sampled_count++;
  page_flags_set(page, kPageSampled, std::memory_order_release);
  return true;
}

void untrack_record(Record* record) {
  if (record->bitmap != nullptr) {
    __atomic_fetch_and(&record->bitmap[record->bit / 64], ~(uint64_t{1} << (record->bit % 64)),
                       __ATOMIC_RELEASE);
  }
  record_erase(record);
  // With its last sample gone the page's frees take the fast path again.
  if (--record->page->sampled_count == 0) page_flags_clear(record->page, kPageSampled);
}

}  // namespace prof

// Records a built-in sample. Runs on the allocating thread, right after the allocation. True
// when the live set reached a new peak worth a copy.
HS_TEXT HS_NOINLINE static bool record_sample_locked_part(Heap* heap, void* p, size_t size) {
  uintptr_t pcs[HS_PROF_MAX_STACK_DEPTH];
  uint32_t max_depth = __atomic_load_n(&g_session.max_stack_depth, __ATOMIC_RELAXED);
  uint32_t depth =
      capture_stack(pcs, max_depth < HS_PROF_MAX_STACK_DEPTH ? max_depth : HS_PROF_MAX_STACK_DEPTH);
  LockGuard lock;
  if (!g_session.enabled.load(std::memory_order_relaxed)) return false;  // stopped meanwhile
  if (depth == 0) {
    g_session.dropped_empty_stack++;
    return false;
  }
  auto* record = static_cast<Record*>(g_memory.allocate(sizeof(Record)));
  StackEntry* stack = record != nullptr ? intern_stack(pcs, depth) : nullptr;
  if (stack != nullptr) {
    *record = Record{};
    record->address = reinterpret_cast<uintptr_t>(p);
    record->size = size;
    record->weight = sample_weight(size, heap->prof_interval);
    record->stack = stack;
  }
  if (stack == nullptr || !track_record(record)) {
    if (record != nullptr) g_memory.release(record, sizeof(Record));
    if (stack != nullptr) stack_release(stack);
    g_session.dropped_no_memory++;
    return false;
  }
  double weight = record->weight;
  double weighted_bytes = weight * static_cast<double>(size);
  stack->refcount++;
  stack->live_objects++;
  stack->live_bytes += size;
  stack->live_objects_estimate += weight;
  stack->live_bytes_estimate += weighted_bytes;
  g_session.live_samples++;
  g_session.live_bytes += size;
  g_session.live_objects_estimate += weight;
  g_session.live_bytes_estimate += weighted_bytes;
  g_session.total_samples++;
  g_session.allocated_bytes_estimate += weighted_bytes;
  if (g_session.accum) {
    stack->accum_objects++;
    stack->accum_bytes += size;
    stack->accum_objects_estimate += weight;
    stack->accum_bytes_estimate += weighted_bytes;
    g_session.accum_samples++;
    g_session.accum_bytes += size;
  }
  return peak_due(g_session.live_bytes_estimate);
}

// After the lock is gone (a copy takes it, a snapshot writes files): the peak copy, the pprof
// profiler's automatic snapshots and the numbered profiles over time.
HS_TEXT HS_NOINLINE void record_sample(Heap* heap, void* p, size_t size) {
  if (heap->prof_owner != nullptr) {
    user_sample(heap->prof_owner, heap, p, size, heap->prof_interval);
    return;
  }
  heap->prof_last_sample = p;  // an aligned allocation then records its requested size
  if (record_sample_locked_part(heap, p, size)) peak_take();
  pprof_auto_snapshot_check();
  interval_dumps_check();
}

namespace prof {

void drop_record(Record* record) {
  untrack_record(record);
  if (StackEntry* stack = record->stack) {
    double weight = record->weight;
    stack->refcount--;
    stack->live_objects--;
    stack->live_bytes -= record->size;
    stack->live_objects_estimate -= weight;
    stack->live_bytes_estimate -= weight * static_cast<double>(record->size);
    g_session.live_samples--;
    g_session.live_bytes -= record->size;
    g_session.live_objects_estimate -= weight;
    g_session.live_bytes_estimate -= weight * static_cast<double>(record->size);
    if (stack->refcount == 0) {
      // Whatever rounding is left in the estimates of an emptied stack is noise.
      stack->live_objects_estimate = stack->live_bytes_estimate = 0;
    }
    if (g_session.live_samples == 0) {
      g_session.live_objects_estimate = g_session.live_bytes_estimate = 0;
    }
    stack_release(stack);
    g_memory.release(record, sizeof(Record));
  }
}

}  // namespace prof

// A block of a page flagged kPageSampled is being freed (any thread): if it is a sample,
// forget it before the block can be reused.
void sampled_free(Page* page, void* p) {
  if (!page_holds_one_block(page) && !page_block_is_sample(page, p)) return;
  Record removed{};
  {
    LockGuard lock;
    Record* record = record_find(reinterpret_cast<uintptr_t>(p));
    if (record == nullptr) return;
    if (record->owner != nullptr) {
      removed = *record;
      untrack_record(record);
      g_memory.release(record, sizeof(Record));
    } else {
      drop_record(record);
      return;
    }
  }
  user_sample_freed(removed);
}

namespace {
void resize_record(void* p, size_t new_size, bool notify);
}  // namespace

// realloc/hs_expand kept the block in place with a new requested size.
void sampled_resize(Page* page, void* p, size_t new_size) {
  (void)page;
  resize_record(p, new_size, true);
}

// An aligned allocation was served from a rounded-up size class: record the requested size.
// Weights stay those of the rounded size, which is the size the sampling decision saw.
void sampled_set_requested(Page* page, void* p, size_t size) {
  (void)page;
  resize_record(p, size, false);
}

namespace {
void resize_record(void* p, size_t new_size, bool notify) {
  Record snapshot{};
  uint64_t old_size = 0;
  {
    LockGuard lock;
    Record* record = record_find(reinterpret_cast<uintptr_t>(p));
    if (record == nullptr) return;
    old_size = record->size;
    record->size = new_size;
    if (StackEntry* stack = record->stack) {
      double delta = static_cast<double>(new_size) - static_cast<double>(old_size);
      stack->live_bytes += new_size - old_size;  // modular: shrinking works too
      stack->live_bytes_estimate += record->weight * delta;
      g_session.live_bytes += new_size - old_size;
      g_session.live_bytes_estimate += record->weight * delta;
      if (notify && g_session.accum && new_size > old_size) {
        stack->accum_bytes += new_size - old_size;
        stack->accum_bytes_estimate += record->weight * delta;
        g_session.accum_bytes += new_size - old_size;
      }
      return;
    }
    snapshot = *record;
  }
  if (notify) user_sample_resized(snapshot, old_size, new_size);
}
}  // namespace

namespace {

struct DestroyScan {
  Heap* heap;
  Record* user_records[64];
  size_t user_count;
};

bool drop_if_in_heap(Record* record, void* arg) {
  auto* scan = static_cast<DestroyScan*>(arg);
  Page* page = page_of(reinterpret_cast<void*>(record->address));
  if (page == nullptr || __atomic_load_n(&page->heap, __ATOMIC_RELAXED) != scan->heap) return true;
  if (record->owner != nullptr) {
    if (scan->user_count == 64) return false;  // handle these, then scan again
    untrack_record(record);
    scan->user_records[scan->user_count++] = record;
    return true;
  }
  drop_record(record);
  return true;
}

}  // namespace

// hs_heap_destroy is about to free every block of `heap` at once: forget its samples.
void prof_heap_destroy(Heap* heap) {
  for (;;) {
    DestroyScan scan{heap, {}, 0};
    {
      LockGuard lock;
      if (record_count() == 0) return;
      for_each_record_raw(drop_if_in_heap, &scan);
    }
    for (size_t i = 0; i < scan.user_count; ++i) {
      user_sample_freed(*scan.user_records[i]);
      LockGuard lock;
      g_memory.release(scan.user_records[i], sizeof(Record));
    }
    if (scan.user_count < 64) return;
  }
}

// The page's span is going back to its segment: return its bitmap (all bits are clear,
// since every block of the page has been freed or its heap destroyed).
void prof_page_release(Page* page) {
  LockGuard lock;
  uint64_t* bitmap = page->sample_bits.exchange(nullptr, std::memory_order_acq_rel);
  if (bitmap != nullptr) g_bitmap_memory.release(bitmap, kBitmapBytes);
}

}  // namespace heapscope
