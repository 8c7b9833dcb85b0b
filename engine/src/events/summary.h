// HEAPSCOPE_MEMORY_SUMMARY=path: a JSON summary of the tracked figures written at exit, built on
// the public snapshot, formatted into a stack buffer and written with the OS calls (never
// through the allocator).
#pragma once

#include <cstddef>

#include "heapscope/memory_events.h"

namespace heapscope::events {

// Reads HEAPSCOPE_MEMORY_SUMMARY (with %p expanded) at process start.
void summary_init();
// Formats the summary of `snapshot` into buf (NUL-terminated); returns its length.
size_t summary_format(const hs_memory_snapshot_t& snapshot, char* buf, size_t cap);
// Writes the summary to path now; false on an I/O error.
bool summary_write(const char* path);

}  // namespace heapscope::events
