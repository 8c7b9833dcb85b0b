// The engine core's headers in one include, for code above the core (the profiler) that uses
// most of them. Core files include the headers they need.
//
//   segment (32 MiB, aligned) ── 512 slices of 64 KiB; slices 0-1 are the header
//     └── page = span of slices holding blocks of one size class (or one huge block)
//   Heap (per thread, plus first-class heaps) ── direct table + page queue per bin
//   ThreadData (per thread) ── owns segments, spare (empty) segments and pending purges
#pragma once

#include "core/common.h"
#include "core/heap.h"
#include "core/huge.h"
#include "core/options.h"
#include "core/page.h"
#include "core/page_queue.h"
#include "core/profiler_hooks.h"
#include "core/segment.h"
#include "core/size_class.h"
#include "core/slice_map.h"
#include "core/spin_lock.h"
#include "core/stats.h"
#include "core/thread.h"
