// pthread_create, wrapped (only in the overriding libraries): every thread learns its creation
// ordinal in its creator, in creation order, so the profiler's per-thread sampling streams
// (seeded from the session seed and this ordinal) are the same in every run of a program that
// creates its threads in a fixed order, whichever thread happens to allocate first.
#include <dlfcn.h>
#include <pthread.h>

#include "core/alloc_inline.h"
#include "core/idle_owner.h"

using namespace heapscope;

namespace {

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

std::atomic<uint64_t> g_threads_created{0};

struct Trampoline {
  void* (*start)(void*);
  void* arg;
  uint64_t ordinal;
};

HS_HOT_TEXT void* start_with_ordinal(void* raw) {
  Trampoline trampoline = *static_cast<Trampoline*>(raw);
  // Before anything allocates or frees on this thread: its heap takes the ordinal at birth.
  set_thread_creation_ordinal(trampoline.ordinal);
  free_impl(raw);
  return trampoline.start(trampoline.arg);
}

HS_HOT_TEXT CreateFn real_create() {
  static std::atomic<CreateFn> real{nullptr};
  CreateFn fn = real.load(std::memory_order_acquire);
  if (fn == nullptr) {
    // dlsym may allocate: fine here, pthread_create is never called from inside malloc.
    fn = reinterpret_cast<CreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
    real.store(fn, std::memory_order_release);
  }
  return fn;
}

}  // namespace

// override_malloc.cc refers to this, so linking malloc from the static library also brings
// in this file: std::thread calls pthread_create from inside libstdc++, which alone would not
// pull the wrapper out of the archive.
extern "C" HS_INTERNAL const char heapscope_thread_wrapper_anchor = 0;

extern "C" __attribute__((visibility("default"))) HS_HOT_TEXT int pthread_create(
    pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  CreateFn create = real_create();
  if (create == nullptr) return EAGAIN;
  auto* trampoline = static_cast<Trampoline*>(malloc_impl(sizeof(Trampoline)));
  if (trampoline == nullptr) return create(thread, attr, start, arg);
  trampoline->start = start;
  trampoline->arg = arg;
  trampoline->ordinal = g_threads_created.fetch_add(1, std::memory_order_relaxed) + 1;
  int result = create(thread, attr, start_with_ordinal, trampoline);
  divert_own_direct_tables();
  if (result != 0) free_impl(trampoline);
  return result;
}
