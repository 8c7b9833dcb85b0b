// Kept in its own translation unit with no static initialisers and no cold code: Go 1.19's
// DWARF line lookup assumes a unit's line sequences are in address order, and GCC's
// .text.startup / .text.unlikely sequences break that, leaving every frame of the unit
// unnamed in `go tool pprof`.
#include "alloc_chain.h"

#include <heapscope/heapscope.h>

// noipa: no inlining and no specialised clones (a "level_two.constprop.0" has no DWARF name
// for go to find). An instruction after each call keeps it from becoming a tail call.
extern "C" __attribute__((noipa)) void level_two(void** blocks, size_t count, size_t size) {
  for (size_t i = 0; i < count; ++i) blocks[i] = hs_malloc(size);
  asm volatile("" : : : "memory");
}

extern "C" __attribute__((noipa)) void level_one(void** blocks, size_t count, size_t size) {
  level_two(blocks, count, size);
  asm volatile("" : : : "memory");
}
