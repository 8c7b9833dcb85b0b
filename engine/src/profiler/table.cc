// The two hash tables of the profiler: interned stacks (by their frames) and records of
// sampled blocks (by block address). Open addressing with linear probing and backward-shift
// deletion, so lookups stay O(1) and no tombstones pile up; both grow by doubling and give
// their old arrays back to profiler memory. Caller holds g_lock.
#include <string.h>

#include "platform/platform.h"
#include "profiler/prof_internal.h"

namespace heapscope::prof {

namespace {

constexpr uint64_t kStackCap = uint64_t{1} << 20;  // hard cap on distinct stacks

template <typename Entry>
struct Table {
  Entry** slots = nullptr;
  size_t capacity = 0;  // a power of two, or 0
  size_t count = 0;
};

Table<StackEntry> g_stacks;
Table<Record> g_records;

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t hash_frames(const uintptr_t* pcs, uint32_t depth) {
  uint64_t h = 0x6a09e667f3bcc909ULL ^ depth;
  for (uint32_t i = 0; i < depth; ++i) h = mix(h ^ pcs[i]);
  return h;
}

uint64_t hash_of(const StackEntry* entry) { return entry->hash; }
uint64_t hash_of(const Record* record) { return mix(record->address); }

// Rebuilds `table` with `new_capacity` slots; false (table unchanged) without memory.
template <typename Entry>
bool resize(Table<Entry>& table, size_t new_capacity) {
  auto** slots = static_cast<Entry**>(g_memory.allocate(new_capacity * sizeof(Entry*)));
  if (slots == nullptr) return false;
  memset(slots, 0, new_capacity * sizeof(Entry*));
  for (size_t i = 0; i < table.capacity; ++i) {
    Entry* entry = table.slots[i];
    if (entry == nullptr) continue;
    size_t slot = hash_of(entry) & (new_capacity - 1);
    while (slots[slot] != nullptr) slot = (slot + 1) & (new_capacity - 1);
    slots[slot] = entry;
  }
  g_memory.release(table.slots, table.capacity * sizeof(Entry*));
  table.slots = slots;
  table.capacity = new_capacity;
  return true;
}

template <typename Entry>
bool ensure_room(Table<Entry>& table) {
  if (table.capacity == 0) return resize(table, 256);
  if ((table.count + 1) * 4 > table.capacity * 3) return resize(table, table.capacity * 2);
  return true;
}

template <typename Entry>
void insert_slot(Table<Entry>& table, Entry* entry) {
  size_t mask = table.capacity - 1;
  size_t slot = hash_of(entry) & mask;
  while (table.slots[slot] != nullptr) slot = (slot + 1) & mask;
  table.slots[slot] = entry;
  table.count++;
}

// Backward-shift deletion: later members of the probe run move up into the hole when their
// home slot allows it, so no lookup ever stops early at a false gap.
template <typename Entry>
void erase_slot(Table<Entry>& table, size_t hole) {
  size_t mask = table.capacity - 1;
  table.slots[hole] = nullptr;
  table.count--;
  size_t next = (hole + 1) & mask;
  while (table.slots[next] != nullptr) {
    size_t home = hash_of(table.slots[next]) & mask;
    // Move it if its home is not in the cyclic range (hole, next].
    bool home_in_range =
        hole < next ? (home > hole && home <= next) : (home > hole || home <= next);
    if (!home_in_range) {
      table.slots[hole] = table.slots[next];
      table.slots[next] = nullptr;
      hole = next;
    }
    next = (next + 1) & mask;
  }
}

template <typename Entry>
void erase_entry(Table<Entry>& table, const Entry* entry) {
  if (table.capacity == 0) return;
  size_t mask = table.capacity - 1;
  for (size_t slot = hash_of(entry) & mask; table.slots[slot] != nullptr;
       slot = (slot + 1) & mask) {
    if (table.slots[slot] == entry) {
      erase_slot(table, slot);
      return;
    }
  }
}

size_t stack_entry_bytes(uint32_t depth) { return sizeof(StackEntry) + depth * sizeof(uintptr_t); }

}  // namespace

StackEntry* intern_stack(const uintptr_t* pcs, uint32_t depth) {
  uint64_t hash = hash_frames(pcs, depth);
  if (g_stacks.capacity != 0) {
    size_t mask = g_stacks.capacity - 1;
    for (size_t slot = hash & mask; g_stacks.slots[slot] != nullptr; slot = (slot + 1) & mask) {
      StackEntry* entry = g_stacks.slots[slot];
      if (entry->hash == hash && entry->depth == depth &&
          memcmp(entry->pcs, pcs, depth * sizeof(uintptr_t)) == 0) {
        return entry;
      }
    }
  }
  if (g_stacks.count >= kStackCap) {
    g_session.stack_table_overflows++;
    return nullptr;
  }
  if (!ensure_room(g_stacks)) return nullptr;
  auto* entry = static_cast<StackEntry*>(g_memory.allocate(stack_entry_bytes(depth)));
  if (entry == nullptr) return nullptr;
  memset(entry, 0, sizeof(StackEntry));
  entry->hash = hash;
  entry->depth = depth;
  memcpy(entry->pcs, pcs, depth * sizeof(uintptr_t));
  insert_slot(g_stacks, entry);
  return entry;
}

// An entry goes when nothing refers to it any more, unless cumulative counts must survive
// (accum mode) or a visit is walking the table (the sweep after the visit catches it).
void stack_release(StackEntry* entry) {
  if (entry->refcount != 0 || g_session.visiting != 0) return;
  if (g_session.accum && entry->accum_objects != 0) return;
  erase_entry(g_stacks, entry);
  g_memory.release(entry, stack_entry_bytes(entry->depth));
}

void sweep_released_stacks() {
  for (size_t slot = 0; slot < g_stacks.capacity;) {
    StackEntry* entry = g_stacks.slots[slot];
    bool keep =
        entry == nullptr || entry->refcount != 0 || (g_session.accum && entry->accum_objects != 0);
    if (keep) {
      ++slot;
      continue;
    }
    // Erasing shifts later entries into this slot: look at it again.
    erase_slot(g_stacks, slot);
    g_memory.release(entry, stack_entry_bytes(entry->depth));
  }
}

void for_each_stack(bool (*fn)(const StackEntry*, void*), void* arg) {
  for (size_t slot = 0; slot < g_stacks.capacity; ++slot) {
    const StackEntry* entry = g_stacks.slots[slot];
    if (entry == nullptr) continue;
    if (entry->live_objects == 0 && entry->accum_objects == 0) continue;
    if (!fn(entry, arg)) return;
  }
}

size_t stack_count() { return g_stacks.count; }

bool record_insert(Record* record) {
  if (!ensure_room(g_records)) return false;
  insert_slot(g_records, record);
  return true;
}

Record* record_find(uintptr_t address) {
  if (g_records.capacity == 0) return nullptr;
  size_t mask = g_records.capacity - 1;
  for (size_t slot = mix(address) & mask; g_records.slots[slot] != nullptr;
       slot = (slot + 1) & mask) {
    if (g_records.slots[slot]->address == address) return g_records.slots[slot];
  }
  return nullptr;
}

void record_erase(Record* record) { erase_entry(g_records, record); }

size_t record_count() { return g_records.count; }

void for_each_record_raw(bool (*fn)(Record*, void*), void* arg) {
  // The callback may erase the record it is given: re-examine the slot when it changed.
  for (size_t slot = 0; slot < g_records.capacity;) {
    Record* record = g_records.slots[slot];
    if (record == nullptr) {
      ++slot;
      continue;
    }
    if (!fn(record, arg)) return;
    if (g_records.slots[slot] == record) ++slot;
  }
}

void tables_release() {
  g_stacks = Table<StackEntry>{};
  g_records = Table<Record>{};
}

}  // namespace heapscope::prof
