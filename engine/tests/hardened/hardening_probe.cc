// One exploit-style misuse of the heap per run, for hardening_test.cc: run under LD_PRELOAD of
// the default and of the hardened library. Addresses the test looks for in the hardened
// library's report go to stderr ("victim 0x..."), before the misuse; what the misuse achieved
// when nothing stopped it goes to stdout (one word the test checks).
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace {

// Called through volatile pointers so the compiler neither pairs nor diagnoses the misuses.
void* (*volatile g_malloc)(size_t) = malloc;
void (*volatile g_free)(void*) = free;

void say_victim(const void* p) {
  fprintf(stderr, "victim %p\n", p);
  fflush(stderr);
}

void result(const char* word) {
  printf("%s\n", word);
  fflush(stdout);
}

// A freed block's link overwritten by an overflow of its neighbour: without encoded links a
// later malloc returns the attacker's address.
int overflow_into_link() {
  constexpr int kBlocks = 64;
  constexpr size_t kSize = 48;
  char* blocks[kBlocks];
  for (char*& b : blocks) b = static_cast<char*>(g_malloc(kSize));
  size_t stride = malloc_usable_size(blocks[0]);
  for (char* low : blocks) {
    for (char* high : blocks) {
      if (high != low + stride) continue;
      static uintptr_t target[4];
      say_victim(high);
      g_free(high);
      uintptr_t forged = reinterpret_cast<uintptr_t>(target);
      memcpy(low + stride, &forged, sizeof forged);  // 8 bytes past the end of `low`
      // The victim comes back when its list's turn comes (at once when frees push onto the
      // allocation list); the forged address follows it.
      for (int i = 0; i < 4096; ++i) {
        if (g_malloc(kSize) == static_cast<void*>(target)) {
          result("exploited");
          return 0;
        }
      }
      result("not-exploited");
      return 0;
    }
  }
  result("no-adjacent-blocks");
  return 1;
}

int double_free() {
  void* p = g_malloc(64);
  say_victim(p);
  g_free(p);
  g_free(p);
  void* a = g_malloc(64);
  void* b = g_malloc(64);
  result(a == b ? "same-block-twice" : "distinct");
  return 0;
}

void* free_it(void* p) {
  g_free(p);
  return nullptr;
}

// Both frees from threads that do not own the block.
int double_free_remote() {
  void* p = g_malloc(64);
  say_victim(p);
  for (int i = 0; i < 2; ++i) {
    pthread_t thread;
    pthread_create(&thread, nullptr, free_it, p);
    pthread_join(thread, nullptr);
  }
  result("freed-twice");
  _exit(0);  // the list now holds a cycle: nothing may collect it
}

int interior_free() {
  char* p = static_cast<char*>(g_malloc(64));
  say_victim(p + 16);
  g_free(p + 16);
  void* q = g_malloc(64);
  result(q == p + 16 ? "overlapping-block" : "accepted");
  return 0;
}

int foreign_free() {
  static char buffer[256];
  say_victim(buffer + 16);
  g_free(buffer + 16);
  result("ignored");
  return 0;
}

int huge_interior_free() {
  char* p = static_cast<char*>(g_malloc(8 << 20));
  say_victim(p + 4096);
  g_free(p + 4096);
  result("accepted");
  return 0;
}

// Stray writes just before data: into a segment's header (the room after its slice
// descriptors), and into a huge mapping's header just before the block.
int write_before_first_slice() {
  char* p = static_cast<char*>(g_malloc(64));
  uintptr_t segment = reinterpret_cast<uintptr_t>(p) & ~((uintptr_t{1} << 25) - 1);
  volatile char* header_end = reinterpret_cast<volatile char*>(segment + 2 * 65536 - 1);
  *header_end = 1;
  result("wrote");
  return 0;
}

int write_before_huge_block() {
  volatile char* p = static_cast<char*>(g_malloc(8 << 20));
  p[-1] = 1;
  result("wrote");
  return 0;
}

// How many of 200 blocks from a fresh page follow the previous one at the next address.
void* carve_order(void*) {
  constexpr int kBlocks = 200;
  char* blocks[kBlocks];
  for (char*& b : blocks) b = static_cast<char*>(g_malloc(96));
  size_t stride = malloc_usable_size(blocks[0]);
  int sequential = 0;
  for (int i = 1; i < kBlocks; ++i) sequential += blocks[i] == blocks[i - 1] + stride;
  printf("sequential %d of %d\n", sequential, kBlocks - 1);
  return nullptr;
}

int allocation_order() {
  pthread_t thread;  // a fresh thread: a fresh heap, so a fresh page
  pthread_create(&thread, nullptr, carve_order, nullptr);
  pthread_join(thread, nullptr);
  return 0;
}

// What a freed block's first word holds: the next free block's address, or not.
int freed_link() {
  void* a = g_malloc(64);
  void* b = g_malloc(64);
  g_free(a);
  g_free(b);  // b's link now leads to a
  uintptr_t word;
  memcpy(&word, b, sizeof word);
  result(word == reinterpret_cast<uintptr_t>(a) ? "plain" : "encoded");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  struct Scenario {
    const char* name;
    int (*run)();
  };
  static const Scenario kScenarios[] = {
      {"overflow-into-link", overflow_into_link},
      {"double-free", double_free},
      {"double-free-remote", double_free_remote},
      {"interior-free", interior_free},
      {"foreign-free", foreign_free},
      {"huge-interior-free", huge_interior_free},
      {"write-before-first-slice", write_before_first_slice},
      {"write-before-huge-block", write_before_huge_block},
      {"allocation-order", allocation_order},
      {"freed-link", freed_link},
  };
  if (argc == 2) {
    for (const Scenario& s : kScenarios) {
      if (strcmp(argv[1], s.name) == 0) return s.run();
    }
  }
  fprintf(stderr, "usage: hardening_probe SCENARIO\n");
  return 2;
}
