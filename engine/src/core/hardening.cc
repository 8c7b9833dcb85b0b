// The hardened build's mechanisms (see hardening.h); in the default build only the plain
// versions of the helpers remain.
#include "core/hardening.h"

#include <utility>

#include "base/splitmix64.h"
#include "core/assert.h"
#include "core/options.h"
#include "core/segment.h"
#include "platform/platform.h"
#include "platform/thread_local.h"

namespace heapscope {

#if HS_HARDENED
uintptr_t g_link_secret = 0;

namespace {
// The carving order's random stream, one per thread (pages are carved by their owner only).
HS_THREAD_LOCAL(uint64_t, t_carve_state, 0);

// A guard is best effort: when the OS refuses (out of mapping slots), the block is still
// served, only without the guard.
void guard(uint8_t* page_start, bool on) { (void)os::protect(page_start, os::page_size(), !on); }
}  // namespace

HS_HOT_TEXT void hardening_init() {
  uint64_t secret = os::random_u64();
  // A secret with few set bits would leave links almost unencoded.
  while (__builtin_popcountll(secret) < 16) secret = base::splitmix64_mix(secret + base::kGolden);
  g_link_secret = secret;
}

void corrupted_free_list(const Block* block) {
  fatal("heapscope: corrupted free list: the link of a freed block was overwritten", block);
}

bool frees_checked() { return true; }

// The guards sit in the room the header does not use; with OS pages too big for that room
// (64 KiB pages) there is no guard.
HS_HOT_TEXT void guard_segment_header(Segment* segment) {
  size_t header_end = kHeaderSlices * kSliceSize;
  if (sizeof(Segment) + os::page_size() > header_end) return;
  guard(reinterpret_cast<uint8_t*>(segment) + header_end - os::page_size(), true);
}

void guard_huge_block(Segment* segment, size_t block_offset, bool on) {
  if (offsetof(Segment, pages) + sizeof(Page) + os::page_size() > block_offset) return;
  guard(reinterpret_cast<uint8_t*>(segment) + block_offset - os::page_size(), on);
}

HS_HOT_TEXT Block* link_carved_blocks(uint8_t* first, size_t count, size_t size, Block* tail) {
  // At most 4096 / kMinAlign blocks are carved at a time (page_extend); a Fisher-Yates shuffle
  // of their indices gives the order.
  constexpr size_t kMaxCarved = 4096 / kMinAlign;
  uint16_t order[kMaxCarved] = {};
  HS_ASSERT_INTERNAL(count >= 1 && count <= kMaxCarved);
  if (t_carve_state == 0) t_carve_state = g_link_secret ^ os::thread_id();
  base::SplitMix64 random(t_carve_state);
  for (size_t i = 0; i < count; ++i) order[i] = static_cast<uint16_t>(i);
  for (size_t i = count - 1; i > 0; --i) {
    size_t j = random.below(i + 1);
    std::swap(order[i], order[j]);
  }
  t_carve_state = random.next() | 1;
  Block* next = tail;
  for (size_t i = count; i-- > 0;) {
    Block* block = reinterpret_cast<Block*>(first + order[i] * size);
    block_set_next(block, next);
    next = block;
  }
  return next;
}

#else

HS_HOT_TEXT void hardening_init() {}
bool frees_checked() { return option(hs_option_check_frees) != 0; }
HS_HOT_TEXT void guard_segment_header(Segment*) {}
void guard_huge_block(Segment*, size_t, bool) {}

HS_HOT_TEXT Block* link_carved_blocks(uint8_t* first, size_t count, size_t size, Block* tail) {
  Block* next = tail;
  for (size_t i = count; i-- > 0;) {
    Block* block = reinterpret_cast<Block*>(first + i * size);
    block_set_next(block, next);
    next = block;
  }
  return next;
}

#endif

}  // namespace heapscope
