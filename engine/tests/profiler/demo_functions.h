// Named functions whose real return addresses become the fake stacks of the writer tests,
// so pprof has something to resolve: one C function and one C++ member function.
#pragma once

#include <cstdint>

extern "C" {
// Each returns the return address of its call to a helper: an address inside itself.
uintptr_t demo_alloc_small_c(void);
uintptr_t demo_entry_point(void);
}

namespace demo {
class Holder {
 public:
  uintptr_t allocate_big();  // mangled _ZN4demo6Holder12allocate_bigEv
};
}  // namespace demo

namespace hs_test {

// The return addresses captured once per process.
struct DemoAddresses {
  uintptr_t small_c;     // inside demo_alloc_small_c
  uintptr_t big_member;  // inside demo::Holder::allocate_big
  uintptr_t entry;       // inside demo_entry_point (the common caller frame)
};
DemoAddresses demo_addresses();

}  // namespace hs_test
