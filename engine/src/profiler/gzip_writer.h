// The gzip wrapper pprof expects around profile.proto, written by the engine itself so its
// libraries need no zlib (engine/README.md, "Dependencies"): one deflate block with the fixed
// Huffman codes (RFC 1951 3.2.6), matches found through a hash of 3-byte prefixes over the
// 32 KiB window, CRC-32 and length in the trailer (RFC 1952). Profiles are repetitive (varints,
// location ids, strings), so this gets most of what dynamic codes would; the working memory
// is raw pages, never malloc.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "profiler/os_buffer.h"

namespace heapscope::prof {

// Appends `len` bytes at `data` as one gzip member. False if memory could not be had.
bool gzip_append(const uint8_t* data, size_t len, OsBuffer& out);

// CRC-32 (the gzip/zlib polynomial, reflected, 0xEDB88320) of `len` bytes.
uint32_t crc32(const uint8_t* data, size_t len);

}  // namespace heapscope::prof
