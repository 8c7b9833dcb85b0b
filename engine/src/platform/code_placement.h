// Where a function's code goes in the shared libraries: HS_HOT_TEXT. In the lowest layer, as
// the platform functions every program calls are marked too.
#pragma once

// The code that runs in every program besides the entry points (hs_text, core/common.h): the
// allocator's slow paths, page and segment bookkeeping, thread start and exit, start-up. The shared
// libraries' link (engine/hot_text.ld) puts it and hs_text at the start of the library's code, so
// that a process maps one 64 KiB window of that code and not all of it (docs/allocator.md, "The
// library's own pages"). Code left out still works; running it maps another window.
// Not for inline functions or templates: the compiler would put the copies of several into
// one section of one group, and the linker, keeping one group's copy, would drop the others
// (hot_text.ld names their sections instead).
#if defined(__ELF__)
#define HS_HOT_TEXT __attribute__((section(".text.heapscope_hot")))
#else
#define HS_HOT_TEXT
#endif
