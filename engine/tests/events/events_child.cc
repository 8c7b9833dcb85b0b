// Child process of process_test.cc: allocates a known pattern through hs_* and reports, on
// stdout, its pid, whether tracking was on before its first allocation, and the usable sizes,
// so the parent can check HEAPSCOPE_MEMORY_EVENTS and the exit summary against them.
#include <heapscope/heapscope.h>
#include <heapscope/memory_events.h>
#include <unistd.h>

#include <cstdio>

int main() {
  bool enabled = hs_memory_events_enabled();
  void* small[1000];
  void* large[10];
  for (void*& p : small) p = hs_malloc(100);
  for (void*& p : large) p = hs_malloc(5000);
  std::printf("pid=%d enabled=%d small=%zu large=%zu\n", static_cast<int>(getpid()),
              enabled ? 1 : 0, hs_usable_size(small[0]), hs_usable_size(large[0]));
  for (void* p : small) hs_free(p);
  for (void* p : large) hs_free(p);
  hs_free(hs_malloc(7));  // short-lived
  return 0;
}
