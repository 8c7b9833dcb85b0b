// Stack capture by walking frame pointers. No backtrace(): glibc's loads libgcc_s (and calls
// malloc) on first use. Every frame read is bounds-checked against the mapping that holds the
// current stack, so a frame pointer clobbered by code built without frame pointers ends the
// walk instead of faulting. The allocator's own frames are skipped: all of them are placed in
// the `hs_text` section (HS_TEXT), whose bounds the linker provides.
#include <fcntl.h>
#include <unistd.h>

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
__thread uintptr_t t_stack_end __attribute__((tls_model("initial-exec"))) = 0;

uintptr_t parse_hex(const char*& s) {
  uintptr_t value = 0;
  for (;; ++s) {
    char c = *s;
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return value;
    value = value * 16 + static_cast<uintptr_t>(digit);
  }
}

// Reads /proc/self/maps with read(2) into a stack buffer and returns the end of the mapping
// containing `address`, or 0.
HS_TEXT uintptr_t mapping_end_of(uintptr_t address) {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[4096];
  size_t filled = 0;
  uintptr_t found = 0;
  for (;;) {
    ssize_t n = read(fd, buffer + filled, sizeof buffer - 1 - filled);
    if (n <= 0) break;
    filled += static_cast<size_t>(n);
    buffer[filled] = '\0';
    char* line = buffer;
    for (;;) {
      char* newline = line;
      while (*newline != '\0' && *newline != '\n') ++newline;
      if (*newline == '\0') break;  // partial line: keep it for the next read
      const char* s = line;
      uintptr_t start = parse_hex(s);
      uintptr_t end = *s == '-' ? parse_hex(++s) : 0;
      if (address >= start && address < end) found = end;
      line = newline + 1;
    }
    size_t rest = static_cast<size_t>(buffer + filled - line);
    for (size_t i = 0; i < rest; ++i) buffer[i] = line[i];
    filled = rest;
    if (found != 0) break;
  }
  close(fd);
  return found;
}

inline bool in_allocator(uintptr_t pc) {
  return pc >= reinterpret_cast<uintptr_t>(__start_hs_text) &&
         pc < reinterpret_cast<uintptr_t>(__stop_hs_text);
}

}  // namespace

HS_TEXT HS_NOINLINE uint32_t capture_stack(uintptr_t* pcs, uint32_t max_depth) {
  auto* fp = static_cast<uintptr_t*>(__builtin_frame_address(0));
  uintptr_t low = reinterpret_cast<uintptr_t>(fp);
  if (t_stack_end == 0) t_stack_end = mapping_end_of(low);
  uintptr_t high = t_stack_end;
  if (high == 0) return 0;
  uint32_t depth = 0;
  bool skipping = true;
  while (depth < max_depth) {
    uintptr_t frame = reinterpret_cast<uintptr_t>(fp);
    // A frame holds [saved frame pointer, return address]: both words must be in the stack.
    if (frame < low || frame > high - 2 * sizeof(uintptr_t) || (frame & 7) != 0) break;
    uintptr_t return_address = fp[1];
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
