// A plain program (malloc only, no heapscope API) run under LD_PRELOAD=libheapscope.so by
// tree_test.cc, as a user runs a program: through a wrapper, a shell, fork without exec and a
// tree of processes. Every process allocates through a function of its own name and keeps the
// blocks to exit, so its exit profile must attribute them to that function.
//   tree_child leaf <function> <MiB>   allocate through one of the named functions below
//   tree_child fork                     fork_parent_before, fork without exec: child
//                                       fork_child_only; parent fork_parent_after
//   tree_child tree <self>              tree_root, which runs "<self> middle <self>"
//   tree_child middle <self>            tree_middle, which runs "<self> leaf tree_leaf 3"
//   tree_child peak                     peak_build 64 MiB freed, then peak_after 8 MiB held
//   tree_child paced <ms>               paced_main: a 256 KiB block every 10 ms for <ms>, the
//                                       last 16 held (a program that runs for a while)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace {

// Keeps every block reachable so the allocations are live at exit.
void* volatile g_keep[1 << 16];
size_t g_kept = 0;

// Blocks of 4x the tests' 64 KiB interval: each is sampled with probability 1-exp(-4) = 0.98,
// so a holder's estimate is within a few percent of its size (64 KiB blocks at that interval
// have a standard deviation of ~11% on 3 MiB, and a tree test failed its +-30% bound once).
__attribute__((noinline)) void hold(size_t mib) {
  for (size_t i = 0; i < mib * 4 && g_kept < sizeof g_keep / sizeof g_keep[0]; ++i) {
    void* p = malloc(256 * 1024);
    memset(p, 1, 64);
    g_keep[g_kept++] = p;
  }
  asm volatile("" ::: "memory");
}

#define NAMED_HOLDER(name)                          \
  __attribute__((noinline)) void name(size_t mib) { \
    hold(mib);                                      \
    asm volatile("" ::: "memory");                  \
  }
NAMED_HOLDER(wrapped_main)
NAMED_HOLDER(shell_first)
NAMED_HOLDER(shell_second)
NAMED_HOLDER(fork_parent_before)
NAMED_HOLDER(fork_child_only)
NAMED_HOLDER(fork_parent_after)
NAMED_HOLDER(tree_root)
NAMED_HOLDER(tree_middle)
NAMED_HOLDER(tree_leaf)
NAMED_HOLDER(peak_after)

__attribute__((noinline)) void peak_build(size_t mib) {
  void* blocks[64 * 16];
  size_t count = mib * 16 < 64 * 16 ? mib * 16 : 64 * 16;
  for (size_t i = 0; i < count; ++i) {
    blocks[i] = malloc(64 * 1024);
    memset(blocks[i], 1, 64);
  }
  asm volatile("" ::: "memory");
  for (size_t i = 0; i < count; ++i) free(blocks[i]);
}

int64_t monotonic_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

__attribute__((noinline)) void paced_main(int64_t duration_ms) {
  void* ring[16] = {};
  int64_t end = monotonic_ms() + duration_ms;
  for (size_t i = 0; monotonic_ms() < end; ++i) {
    free(ring[i % 16]);
    ring[i % 16] = malloc(256 * 1024);
    memset(ring[i % 16], 1, 64);
    usleep(10000);
  }
  for (void* p : ring) g_keep[g_kept++] = p;
  asm volatile("" ::: "memory");
}

int run(const char* self, const char* const* argv) {
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    execv(self, const_cast<char* const*>(argv));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int leaf(const char* name, size_t mib) {
  struct Named {
    const char* name;
    void (*fn)(size_t);
  };
  const Named table[] = {{"wrapped_main", wrapped_main},
                         {"shell_first", shell_first},
                         {"shell_second", shell_second},
                         {"tree_leaf", tree_leaf}};
  for (const Named& n : table) {
    if (strcmp(n.name, name) == 0) {
      n.fn(mib);
      return 0;
    }
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && strcmp(argv[1], "leaf") == 0)
    return leaf(argv[2], strtoul(argv[3], nullptr, 10));
  if (argc >= 2 && strcmp(argv[1], "fork") == 0) {
    fork_parent_before(4);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      fork_child_only(8);
      exit(0);  // a normal exit: the child's exit dump runs
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    fork_parent_after(6);
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "tree") == 0) {
    tree_root(5);
    const char* child[] = {argv[2], "middle", argv[2], nullptr};
    return run(argv[2], child);
  }
  if (argc >= 3 && strcmp(argv[1], "middle") == 0) {
    tree_middle(7);
    const char* child[] = {argv[2], "leaf", "tree_leaf", "3", nullptr};
    return run(argv[2], child);
  }
  if (argc >= 2 && strcmp(argv[1], "peak") == 0) {
    peak_build(64);
    peak_after(8);
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "paced") == 0) {
    paced_main(strtol(argv[2], nullptr, 10));
    return 0;
  }
  fprintf(stderr, "usage: tree_child leaf|fork|tree|middle|peak|paced ...\n");
  return 2;
}
