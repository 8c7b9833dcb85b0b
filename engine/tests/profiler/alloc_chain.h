// The end-to-end test's known allocation chain: level_one -> level_two -> hs_malloc.
#pragma once

#include <cstddef>

extern "C" {
void level_one(void** blocks, size_t count, size_t size);
void level_two(void** blocks, size_t count, size_t size);
}
