// The C runtime's allocation functions, replaced in a statically linked MinGW program. Windows
// has no symbol interposition: a program that links libheapscope_static.a defines malloc,
// free, calloc and realloc itself, so every call the linker resolves by those names (the
// program's code, the static C++ runtime's operator new, MinGW's static helpers) comes here,
// while code inside DLLs (msvcrt.dll's own strdup, getcwd(NULL), stdio buffers; any other DLL)
// keeps allocating from its own heap: engine/docs/platforms.md, "Overriding malloc".
// Only these four: the headers declare the CRT's other allocation functions (_msize,
// _aligned_malloc, _recalloc, ...) as DLL imports, which callers reach through the import
// table whatever the program defines.
#include "core/alloc_inline.h"

using namespace heapscope;

#define HS_EXPORT extern "C" HS_TEXT

HS_EXPORT void* malloc(size_t size) { return malloc_impl(size); }
HS_EXPORT void free(void* p) { free_impl(p); }
HS_EXPORT void* calloc(size_t count, size_t size) { return hs_calloc(count, size); }
HS_EXPORT void* realloc(void* p, size_t size) { return realloc_impl(p, size, kMinAlign, false); }
