// No static initialisers and no cold code here (see alloc_chain.cc for why).
#include "demo_library.h"

namespace {

__attribute__((noinline)) uintptr_t library_return_address() {
  return reinterpret_cast<uintptr_t>(__builtin_return_address(0));
}

}  // namespace

extern "C" __attribute__((noinline, visibility("default"))) uintptr_t demo_library_call(void) {
  uintptr_t pc = library_return_address();
  asm volatile("" : "+r"(pc) : : "memory");  // not a tail call
  return pc;
}
