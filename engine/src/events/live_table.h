// The tracked live blocks: address -> usable size and allocation sequence number, in shards
// that each have their own spin lock and open-addressing array (memory from the OS, never from
// the allocator). Membership is what makes the counters exact: only a block found here is
// subtracted when freed, so a block the counters never saw cannot drive them below zero, and the
// visitor walks every thread's tracked blocks from here.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace heapscope::events {

struct Tracked {
  uintptr_t address = 0;  // 0: empty slot (no block lives at address 0)
  uint64_t usable = 0;
  uint64_t seq = 0;  // the process allocation count right after this block's allocation
};

inline constexpr size_t kShardCount = 64;

struct alignas(64) Shard {
  std::atomic<uint32_t> lock{0};
  Tracked* slots = nullptr;
  size_t capacity = 0;  // a power of two, or 0 before the first insert
  size_t count = 0;
};

Shard& shard_of(uintptr_t address);
void shard_lock(Shard& shard);
void shard_unlock(Shard& shard);
// Every shard, in index order (the one order all-shard lockers use).
void lock_all_shards();
void unlock_all_shards();
// In a fork child: every shard lock released (their holders do not exist there).
void reset_all_shard_locks();
// Empties every shard; the caller holds all locks.
void clear_all_shards();
// Calls fn(shard) for each shard in index order (no lock taken).
template <typename Fn>
void for_each_shard(Fn fn);
Shard& shard_at(size_t index);
template <typename Fn>
void for_each_shard(Fn fn) {
  for (size_t i = 0; i < kShardCount; i++) fn(shard_at(i));
}

// The caller holds the shard's lock in all of these.
// Inserts `entry`; an entry already at that address (a tracked block freed where tracking could
// not see it) is replaced and copied to *displaced (returns its presence through the result's
// second meaning: displaced->address != 0). Returns the slot, or nullptr when the table could
// not grow (the block stays untracked).
Tracked* shard_insert(Shard& shard, const Tracked& entry, Tracked* displaced);
// Removes the entry for address into *out; false when the address is not tracked.
bool shard_remove(Shard& shard, uintptr_t address, Tracked* out);
void shard_clear(Shard& shard);
// Removes up to `max` entries for which keep(address) is false into out; returns how many.
template <typename Pred>
size_t shard_remove_if(Shard& shard, Pred dies, Tracked* out, size_t max);
// Calls fn(entry) for each entry until it returns false; returns false when stopped.
template <typename Fn>
bool shard_for_each(const Shard& shard, Fn fn) {
  for (size_t i = 0; i < shard.capacity; i++) {
    if (shard.slots[i].address != 0 && !fn(shard.slots[i])) return false;
  }
  return true;
}

// Removes the entry at slot index i and closes the gap (backward-shift deletion, no tombstones).
void shard_erase_at(Shard& shard, size_t i);

template <typename Pred>
size_t shard_remove_if(Shard& shard, Pred dies, Tracked* out, size_t max) {
  size_t n = 0;
  size_t i = 0;
  while (i < shard.capacity && n < max) {
    if (shard.slots[i].address != 0 && dies(shard.slots[i].address)) {
      out[n++] = shard.slots[i];
      shard_erase_at(shard, i);  // a later entry may have shifted into i: look at i again
    } else {
      i++;
    }
  }
  return n;
}

}  // namespace heapscope::events
