// HEAPSCOPE_MEMORY_SUMMARY=path: a JSON summary of the tracked figures written at exit, built on
// the public snapshot, formatted into a stack buffer and written with the OS calls (never
// through the allocator).
#pragma once

#include <cstddef>

#include "heapscope/memory_events.h"

namespace heapscope::events {

// Reads HEAPSCOPE_MEMORY_SUMMARY at process start; %p, %e are expanded at exit (support/
// output_path.h: one file per process of a tree, never overwritten).
void summary_init();
// Formats the summary of `snapshot` into buf (NUL-terminated); returns its length.
size_t summary_format(const hs_memory_snapshot_t& snapshot, char* buf, size_t cap);
// Writes the summary to the expanded path now (has_pid: it came from %p); false on an I/O error.
bool summary_write(const char* path, bool has_pid);

}  // namespace heapscope::events
