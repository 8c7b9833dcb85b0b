// The profiler's internal index: the lock, profiler memory, interned stacks, sampled-block
// records and the built-in session, plus the functions each profiler file provides. Everything
// here lives in raw OS memory and is touched only on the allocation slow path (a sample,
// roughly once per interval bytes), on frees into pages that hold a sampled block, and by the
// public API.
//
//   allocation fast path ── countdown -= size < 0 ──> malloc_sampled (heap.cc)
//        └─ sampling.cc: new Poisson distance (per-thread splitmix64)
//             └─ samples.cc: record_sample ── table.cc: capture stack, intern it, insert the
//                record ── samples.cc: mark the block's bit in its page
//   free ── page flag kPageSampled ──> samples.cc sampled_free: test the page's bitmap
//
// Files: state.cc (the globals below), sampling.cc, samples.cc, table.cc, prof_memory.cc,
// stack_capture.cc; the public API in config.cc (option table), session.cc (start/stop),
// dump.cc + profile_copy.cc, snapshot.cc, inspect.cc (stats, visits, modules) and pluggable.cc
// (user profilers); the output writers in text_writer.cc, proto_writer.cc, proto_encoder.cc,
// gzip_writer.cc, symbolizer.cc, modules.cc over os_buffer.cc. Every OS call goes through
// platform/.
#pragma once

#include <atomic>

#include "core/alloc_inline.h"
#include "heapscope/profile.h"
#include "internal.h"
#include "platform/thread_local.h"

namespace heapscope::prof {

// ---- the lock ---------------------------------------------------------------------------------
// One lock guards records, stacks and profiler memory. It is taken only for real samples, for
// frees of sampled blocks and by the API; a visitor callback runs with it held, so the free
// hook knows (t_lock_held) not to take it again.
extern std::atomic<uint32_t> g_lock;
HS_THREAD_LOCAL_EXTERN(uint32_t, t_lock_held);
// Nonzero while this thread runs profiler code that may allocate (visitors, the demangler):
// such allocations are never sampled and the API fails fast.
HS_THREAD_LOCAL_EXTERN(uint32_t, t_suppress);

class LockGuard {
 public:
  LockGuard() : took_(t_lock_held == 0) {
    if (took_) {
      spin_lock(g_lock);
      t_lock_held = 1;
    }
  }
  ~LockGuard() {
    if (took_) {
      t_lock_held = 0;
      spin_unlock(g_lock);
    }
  }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  bool took_;
};

// ---- profiler memory -------------------------------------------------------------------------
// Fixed-size objects in power-of-two classes carved from 16 KiB OS chunks (kChunkSize), with
// free lists so freed records and stacks are reused; larger requests (hash tables) are mapped
// directly. Everything is counted against the session budget. Caller holds g_lock.
class ProfMemory {
 public:
  void* allocate(size_t size);
  void release(void* p, size_t size);
  void release_everything();  // unmaps every chunk (session end)
  uint64_t committed() const { return committed_; }
  uint64_t in_use() const { return in_use_; }  // bytes of objects handed out, not yet released
  void set_budget(uint64_t max_bytes) { budget_ = max_bytes; }
  uint64_t budget() const { return budget_; }
  // Also counts what `partner` has in use against this pool's budget (one budget, two pools).
  void share_budget(const ProfMemory* partner) { partner_ = partner; }

 private:
  static constexpr size_t kMinClassShift = 5;   // 32 B
  static constexpr size_t kMaxClassShift = 12;  // 4 KiB
  static constexpr size_t kClasses = kMaxClassShift - kMinClassShift + 1;
  static constexpr size_t kChunkSize = 16 * 1024;  // small: a small budget still holds a few
  struct FreeObject {
    FreeObject* next;
  };
  struct Chunk {
    Chunk* next;
    size_t size;
  };
  bool within_budget(size_t more) const {
    uint64_t used = committed_ + (partner_ != nullptr ? partner_->in_use_ : 0);
    return budget_ == 0 || used + more <= budget_;
  }
  void* map_chunk(size_t size);

  FreeObject* free_lists_[kClasses] = {};
  uint8_t* bump_[kClasses] = {};
  uint8_t* bump_end_[kClasses] = {};
  Chunk* chunks_ = nullptr;  // every mapping, for release_everything
  uint64_t committed_ = 0;
  uint64_t budget_ = 0;
  uint64_t in_use_ = 0;
  const ProfMemory* partner_ = nullptr;
};

// ---- interned stacks --------------------------------------------------------------------------
struct StackEntry {
  uint64_t hash;
  uint32_t depth;
  uint32_t refcount;  // live records pointing here
  uint64_t live_objects, live_bytes, accum_objects, accum_bytes;
  double live_objects_estimate, live_bytes_estimate;
  double accum_objects_estimate, accum_bytes_estimate;
  uintptr_t pcs[];  // depth return addresses, innermost first
};

// ---- records of sampled blocks ----------------------------------------------------------------
struct Record {
  uintptr_t address;     // the block start
  uint64_t size;         // requested bytes (updated by in-place resizes)
  double weight;         // 1 / P(sampled) for the size and interval at sampling time
  StackEntry* stack;     // nullptr for samples owned by a user profiler
  Page* page;            // the page holding the block
  uint64_t* bitmap;      // the page's sampled-block bitmap (nullptr for huge blocks)
  uint32_t bit;          // block index within the page
  uint32_t data_size;    // bytes of user data (user profiler samples)
  hs_profiler_t* owner;  // user profiler that owns the sample, nullptr for the built-in one
  hs_heap_t* heap;
  hs_profiler_sample_data_t* data;
};

// ---- the built-in session -----------------------------------------------------------------------
struct Session {
  std::atomic<bool> enabled{false};
  uint64_t interval = HS_PROF_DEFAULT_INTERVAL;
  uint64_t seed = 0;  // the effective seed (drawn when 0 was asked for)
  bool accum = false;
  uint32_t max_stack_depth = HS_PROF_DEFAULT_STACK_DEPTH;
  uint64_t total_samples = 0;
  uint64_t dropped_no_memory = 0;
  uint64_t dropped_empty_stack = 0;
  uint64_t stack_table_overflows = 0;
  uint64_t live_samples = 0, live_bytes = 0, accum_samples = 0, accum_bytes = 0;
  double live_objects_estimate = 0, live_bytes_estimate = 0;
  int visiting = 0;  // > 0 while hs_prof_visit runs: stack entries are not released
  double allocated_bytes_estimate = 0;  // unsampled bytes allocated this session (all samples)
  uint64_t user_data_blocks = 0;        // user profilers' sample data held (even outside the table)
};
extern Session g_session;
extern ProfMemory g_memory;         // records, stacks, tables: released when the session ends
extern ProfMemory g_bitmap_memory;  // page bitmaps: pages keep pointing at them, never unmapped

// Bumped by every start/stop/attach: heaps compare it on the slow path and re-arm.
extern std::atomic<uint64_t> g_generation;
// Bumped by every start: threads re-seed their PRNG from (seed, ordinal) when it changes.
extern std::atomic<uint64_t> g_seed_generation;
extern std::atomic<uint64_t> g_seed_for_generation;
// A user profiler attached to every heap (hs_profile), or nullptr.
extern std::atomic<hs_profiler_t*> g_process_profiler;

// sampling.cc: the interval that applies to a heap now (0 = none) and who owns its samples.
uint64_t heap_interval(Heap* heap, hs_profiler_t** owner);
double sample_weight(uint64_t size, uint64_t interval);

// table.cc (caller holds g_lock unless noted)
StackEntry* intern_stack(const uintptr_t* pcs, uint32_t depth);  // nullptr: dropped
void stack_release(StackEntry* entry);
bool record_insert(Record* record);  // false: no memory for the table (record not added)
Record* record_find(uintptr_t address);
void record_erase(Record* record);  // removes it from the table only
size_t record_count();
size_t stack_count();
void tables_release();  // forget the (empty) tables; used before g_memory is released
// Visits every stack entry with nonzero counts (slot order); stop when fn returns false.
void for_each_stack(bool (*fn)(const StackEntry*, void*), void* arg);
void for_each_record_raw(bool (*fn)(Record*, void*), void* arg);
void sweep_released_stacks();  // after a visit: release entries whose refcount fell to 0

// samples.cc: inserts a filled-in record and marks its block as sampled (caller holds g_lock).
bool track_record(Record* record);
// The reverse: out of the table, bit cleared, page flag cleared with the page's last sample.
void untrack_record(Record* record);

// Removes a record (any owner): clears its bitmap bit, updates its stack and the totals,
// returns the record memory. A user profiler's on_free is called by the caller, unlocked.
void drop_record(Record* record);

// Stack capture (stack_capture.cc): return addresses of the caller of the allocator, innermost
// first; the allocator's own frames are skipped. Returns the depth (0 if nothing usable).
uint32_t capture_stack(uintptr_t* pcs, uint32_t max_depth);

// User profilers (pluggable.cc). The callbacks run without the lock, with sampling suppressed.
void user_sample(hs_profiler_t* profiler, Heap* heap, void* p, size_t size, uint64_t interval);
void user_sample_freed(const Record& record);  // record already out of the table
void user_sample_resized(const Record& record, uint64_t old_size, uint64_t new_size);
bool user_profiler_started(hs_profiler_t* profiler);
uint64_t user_profiler_interval(hs_profiler_t* profiler);
// The pprof profiler object's automatic snapshots, checked after each built-in sample.
void pprof_auto_snapshot_check();

// Dumps (dump.cc); false inside a visitor or when the profile could not be built.
bool dump_to_path(const char* path, int format);

}  // namespace heapscope::prof
