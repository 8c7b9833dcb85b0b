// C++ code a C program loads late and privately (dlopen RTLD_LOCAL, as Python loads extension
// modules), so the engine's weak references to the C++ runtime were not bound when it was
// preloaded: a failing operator new must still call the handler and throw std::bad_alloc.
// Returns 0 when it behaves, else the number of the first check that failed.
#include <stddef.h>

#include <new>

namespace {
int g_handler_calls = 0;
volatile size_t g_huge = size_t{1} << 62;  // fails in every allocator; volatile: not folded
}  // namespace

extern "C" __attribute__((visibility("default"))) int hs_probe_new_failure() {
  g_handler_calls = 0;
  std::set_new_handler([] {
    if (++g_handler_calls == 2) std::set_new_handler(nullptr);
  });
  try {
    void* p = ::operator new(g_huge);
    ::operator delete(p);
    return 1;
  } catch (const std::bad_alloc&) {
  }
  if (g_handler_calls != 2) return 2;
  if (::operator new(g_huge, std::nothrow) != nullptr) return 3;
  std::set_new_handler([] { throw std::bad_alloc(); });
  if (::operator new(g_huge, std::nothrow) != nullptr) return 4;
  std::set_new_handler(nullptr);
  return 0;
}
