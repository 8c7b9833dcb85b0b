// Its own translation unit with no static initialisers: go tool pprof (Go 1.19) names frames
// from DWARF and fails on units whose line sequences are out of address order (see
// alloc_chain.cc).
#include "demo_functions.h"

#define DEMO_NOINLINE __attribute__((noinline))

namespace {

DEMO_NOINLINE uintptr_t caller_return_address() {
  return reinterpret_cast<uintptr_t>(__builtin_return_address(0));
}

// An instruction after the call keeps it from becoming a tail call (which would report the
// caller's caller).
inline uintptr_t keep_frame(uintptr_t pc) {
  asm volatile("" : "+r"(pc) : : "memory");
  return pc;
}

}  // namespace

extern "C" DEMO_NOINLINE uintptr_t demo_alloc_small_c(void) {
  return keep_frame(caller_return_address());
}

extern "C" DEMO_NOINLINE uintptr_t demo_entry_point(void) {
  return keep_frame(caller_return_address());
}

namespace demo {
DEMO_NOINLINE uintptr_t Holder::allocate_big() { return keep_frame(caller_return_address()); }
}  // namespace demo

namespace hs_test {

DemoAddresses demo_addresses() {
  demo::Holder holder;
  return {demo_alloc_small_c(), holder.allocate_big(), demo_entry_point()};
}

}  // namespace hs_test
