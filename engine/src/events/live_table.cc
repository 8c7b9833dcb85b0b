// The sharded table of tracked live blocks (see live_table.h).
#include "events/events_hooks.h"  // defines HS_MEMORY_EVENTS
#if HS_MEMORY_EVENTS
#include "core/spin_lock.h"
#include "events/live_table.h"
#include "platform/platform.h"

namespace heapscope::events {
namespace {

Shard g_shards[kShardCount];

constexpr size_t kInitialCapacity = 1024;

// Fibonacci hashing of the address without its always-zero low bits: the top bits pick the
// shard, the bits below them the slot, so neighbours in memory spread over both.
inline uint64_t hash_of(uintptr_t address) { return (address >> 4) * 0x9E3779B97F4A7C15ull; }
inline size_t home_slot(const Shard& shard, uintptr_t address) {
  return static_cast<size_t>(hash_of(address) >> 6) & (shard.capacity - 1);
}

Tracked* map_slots(size_t capacity) {
  size_t bytes = capacity * sizeof(Tracked);
  size_t page = os::page_size();
  bytes = (bytes + page - 1) & ~(page - 1);
  return static_cast<Tracked*>(os::map_aligned(bytes, page));
}
void unmap_slots(Tracked* slots, size_t capacity) {
  if (slots == nullptr) return;
  size_t page = os::page_size();
  os::unmap(slots, (capacity * sizeof(Tracked) + page - 1) & ~(page - 1));
}

Tracked* place(Shard& shard, const Tracked& entry) {
  size_t mask = shard.capacity - 1;
  for (size_t i = home_slot(shard, entry.address);; i = (i + 1) & mask) {
    if (shard.slots[i].address == 0 || shard.slots[i].address == entry.address) {
      shard.slots[i] = entry;
      return &shard.slots[i];
    }
  }
}

// Keeps the load at or below 3/4 so probe runs stay short and an empty slot always exists.
bool ensure_room(Shard& shard) {
  if (shard.capacity != 0 && (shard.count + 1) * 4 <= shard.capacity * 3) return true;
  size_t capacity = shard.capacity == 0 ? kInitialCapacity : shard.capacity * 2;
  Tracked* slots = map_slots(capacity);
  if (slots == nullptr) return false;
  Tracked* old = shard.slots;
  size_t old_capacity = shard.capacity;
  shard.slots = slots;
  shard.capacity = capacity;
  for (size_t i = 0; i < old_capacity; i++) {
    if (old[i].address != 0) place(shard, old[i]);
  }
  unmap_slots(old, old_capacity);
  return true;
}

size_t find(const Shard& shard, uintptr_t address) {
  if (shard.capacity == 0) return SIZE_MAX;
  size_t mask = shard.capacity - 1;
  for (size_t i = home_slot(shard, address);; i = (i + 1) & mask) {
    if (shard.slots[i].address == address) return i;
    if (shard.slots[i].address == 0) return SIZE_MAX;
  }
}

}  // namespace

Shard& shard_of(uintptr_t address) { return g_shards[hash_of(address) >> 58]; }
Shard& shard_at(size_t index) { return g_shards[index]; }
void clear_all_shards() {
  for (Shard& shard : g_shards) shard_clear(shard);
}
void shard_lock(Shard& shard) { spin_lock(shard.lock); }
void shard_unlock(Shard& shard) { spin_unlock(shard.lock); }

void lock_all_shards() {
  for (Shard& shard : g_shards) spin_lock(shard.lock);
}
void unlock_all_shards() {
  for (size_t i = kShardCount; i-- > 0;) spin_unlock(g_shards[i].lock);
}
void reset_all_shard_locks() {
  for (Shard& shard : g_shards) shard.lock.store(0, std::memory_order_relaxed);
}

Tracked* shard_insert(Shard& shard, const Tracked& entry, Tracked* displaced) {
  *displaced = Tracked{};
  size_t at = find(shard, entry.address);
  if (at != SIZE_MAX) {
    *displaced = shard.slots[at];
    shard.slots[at] = entry;
    return &shard.slots[at];
  }
  if (!ensure_room(shard)) return nullptr;
  shard.count++;
  return place(shard, entry);
}

void shard_erase_at(Shard& shard, size_t i) {
  size_t mask = shard.capacity - 1;
  shard.slots[i] = Tracked{};
  shard.count--;
  // Pull later entries of the probe run back over the hole when their home slot allows it.
  for (size_t j = (i + 1) & mask; shard.slots[j].address != 0; j = (j + 1) & mask) {
    size_t home = home_slot(shard, shard.slots[j].address);
    // The entry at j may move to the hole at i unless its home lies cyclically in (i, j].
    bool home_in_between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!home_in_between) {
      shard.slots[i] = shard.slots[j];
      shard.slots[j] = Tracked{};
      i = j;
    }
  }
}

bool shard_remove(Shard& shard, uintptr_t address, Tracked* out) {
  size_t at = find(shard, address);
  if (at == SIZE_MAX) return false;
  *out = shard.slots[at];
  shard_erase_at(shard, at);
  return true;
}

void shard_clear(Shard& shard) {
  for (size_t i = 0; i < shard.capacity; i++) shard.slots[i] = Tracked{};
  shard.count = 0;
}

}  // namespace heapscope::events

#endif  // HS_MEMORY_EVENTS
