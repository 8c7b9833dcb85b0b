// Invariant checks for debug builds, by cost: HS_DEBUG=1 compiles in the cheap ones (a compare
// or two where a structure changes: queue links, size class bounds, slice ranges, ownership),
// HS_DEBUG=2 adds the expensive ones (walking a page's free lists to check its counts). With
// HS_DEBUG=0 (Release) neither evaluates its condition, so release code is unchanged. A failed
// check reports through fatal(), which formats into a stack buffer, never allocates, and aborts:
// an allocator whose structures are broken must not run on.
#pragma once

#include "core/common.h"

#define HS_ASSERT_STRING2(x) #x
#define HS_ASSERT_STRING(x) HS_ASSERT_STRING2(x)
#define HS_ASSERT_FAIL(cond)                                                  \
  ::heapscope::fatal("heapscope: internal check failed: " #cond " (" __FILE__ \
                     ":" HS_ASSERT_STRING(__LINE__) ")")

#if HS_DEBUG >= 1
#define HS_ASSERT_INTERNAL(cond) (HS_LIKELY(cond) ? (void)0 : HS_ASSERT_FAIL(cond))
#else
#define HS_ASSERT_INTERNAL(cond) ((void)0)
#endif

#if HS_DEBUG >= 2
#define HS_ASSERT_EXPENSIVE(cond) (HS_LIKELY(cond) ? (void)0 : HS_ASSERT_FAIL(cond))
#else
#define HS_ASSERT_EXPENSIVE(cond) ((void)0)
#endif
