// Stack capture by the OS's unwinder where the platform has one that is safe here (Windows),
// else by walking frame pointers. No backtrace(): glibc's loads libgcc_s (and calls malloc) on
// first use. Every frame read is bounds-checked against the mapping that holds the
// current stack, so a frame pointer clobbered by code built without frame pointers ends the
// walk instead of faulting (the stack's bounds come from the platform layer; the walk itself
// depends on the CPU's frame layout, not on the OS). The allocator's own frames are skipped: all of
// them are placed in the `hs_text` section (HS_TEXT), whose bounds the linker provides.
#include "platform/platform.h"
#include "profiler/prof_internal.h"

extern "C" {
// Defined by the linker for the section named by HS_TEXT (see common.h).
extern const char __start_hs_text[] __attribute__((visibility("hidden")));
extern const char __stop_hs_text[] __attribute__((visibility("hidden")));
}

namespace heapscope::prof {

namespace {

// The end of this thread's stack mapping (0 until first needed). Thread stacks are fixed
// mappings (the main stack grows down, never up), so the end found once stays valid.
HS_THREAD_LOCAL(uintptr_t, t_stack_end, 0);

inline bool in_allocator(uintptr_t pc) {
  return pc >= reinterpret_cast<uintptr_t>(__start_hs_text) &&
         pc < reinterpret_cast<uintptr_t>(__stop_hs_text);
}

}  // namespace

// Room for the allocator's own frames above the max_depth frames kept.
constexpr uint32_t kUnwindMax = HS_PROF_MAX_STACK_DEPTH + 32;

HS_TEXT HS_NOINLINE uint32_t capture_stack(uintptr_t* pcs, uint32_t max_depth) {
  // The OS's unwinder where it has a safe one (Windows): it needs no frame pointers.
  uintptr_t unwound[kUnwindMax];
  uint32_t count = os::unwind_stack(unwound, kUnwindMax);
  if (count != 0) {
    uint32_t first = 0;
    while (first < count && in_allocator(unwound[first])) ++first;
    uint32_t depth = 0;
    // A zero ends the stack (Wine's unwinder reports words past the thread's first frame).
    while (first + depth < count && depth < max_depth && unwound[first + depth] != 0) {
      pcs[depth] = unwound[first + depth];
      ++depth;
    }
    return depth;
  }
  auto* fp = static_cast<uintptr_t*>(__builtin_frame_address(0));
  uintptr_t low = reinterpret_cast<uintptr_t>(fp);
  if (t_stack_end == 0) t_stack_end = os::mapping_end(low);
  uintptr_t high = t_stack_end;
  if (high == 0) return 0;
  uint32_t depth = 0;
  bool skipping = true;
  while (depth < max_depth) {
    uintptr_t frame = reinterpret_cast<uintptr_t>(fp);
    // A frame holds [saved frame pointer, return address]: both words must be in the stack.
    if (frame < low || frame > high - 2 * sizeof(uintptr_t) || (frame & 7) != 0) break;
    uintptr_t return_address = fp[1];
#if defined(__aarch64__)
    // AArch64 frame records are {x29, x30} pairs, the same layout. Code built with
    // -mbranch-protection=pac-ret saves x30 signed: the signature sits in the bits above the
    // virtual address, so keeping the user address bits yields the plain return address.
    return_address &= (uintptr_t{1} << os::kUserAddressBits) - 1;
#endif
    auto* next = reinterpret_cast<uintptr_t*>(fp[0]);
    if (return_address == 0) break;
    if (skipping && in_allocator(return_address)) {
      // still inside heapscope
    } else {
      skipping = false;
      pcs[depth++] = return_address;
    }
    if (reinterpret_cast<uintptr_t>(next) <= frame) break;  // frames only go up the stack
    fp = next;
  }
  return depth;
}

}  // namespace heapscope::prof
