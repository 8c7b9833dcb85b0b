// SIGINT and SIGTERM handled by `handler` for the guard's lifetime, the previous handlers put
// back after it. The handler should only set a flag: the work in flight checks it between
// steps and stops cleanly, so what was measured so far can be saved.
#pragma once

#include <csignal>

namespace heapscope::harness {

class InterruptGuard {
 public:
  explicit InterruptGuard(void (*handler)(int));
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace heapscope::harness
