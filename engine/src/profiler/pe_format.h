// The parts of the PE/COFF image format the symbolizer reads (headers, sections, the COFF symbol
// table MinGW's linker keeps in an unstripped image, the CodeView debug record), declared here
// from the PE format specification: images are data, read on any OS, and <windows.h> is for
// src/platform/ only. Read field by field with memcpy: nothing in a file is trusted to be aligned.
#pragma once

#include <stdint.h>
#include <string.h>

namespace heapscope::prof::pe {

inline constexpr size_t kDosNewHeaderOffset = 0x3c;  // e_lfanew
inline constexpr size_t kFileHeaderSize = 20;        // after the "PE\0\0" signature
inline constexpr size_t kSectionHeaderSize = 40;
inline constexpr size_t kSymbolSize = 18;
inline constexpr size_t kDebugEntrySize = 28;
inline constexpr uint16_t kOptionalMagicPe32Plus = 0x20b;
inline constexpr size_t kOptionalImageBase = 24;  // uint64 in a PE32+ optional header
inline constexpr size_t kOptionalDataDirectories = 112;
inline constexpr size_t kDebugDirectoryIndex = 6;
inline constexpr uint32_t kDebugTypeCodeView = 2;
inline constexpr uint32_t kCodeViewRsds = 0x53445352;  // "RSDS": GUID, age, PDB path
inline constexpr uint16_t kTypeFunction = 0x20;        // complex type "function", base type none
inline constexpr uint8_t kClassExternal = 2;
inline constexpr uint8_t kClassStatic = 3;
inline constexpr uint8_t kClassWeakExternal = 105;

template <typename T>
inline T field(const uint8_t* p) {
  T value;
  memcpy(&value, p, sizeof value);
  return value;
}

// Where an image's headers are, once checked to lie inside the file.
struct Image {
  const uint8_t* file_header;  // COFF file header
  const uint8_t* optional;     // PE32+ optional header
  const uint8_t* sections;     // section table
  uint16_t section_count;
  uint16_t optional_size;
  uint64_t image_base;
};

inline bool parse_image(const uint8_t* file, size_t size, Image* out) {
  if (size < kDosNewHeaderOffset + 4 || file[0] != 'M' || file[1] != 'Z') return false;
  uint32_t pe_offset = field<uint32_t>(file + kDosNewHeaderOffset);
  if (pe_offset > size || size - pe_offset < 4 + kFileHeaderSize) return false;
  if (memcmp(file + pe_offset, "PE\0\0", 4) != 0) return false;
  const uint8_t* header = file + pe_offset + 4;
  uint16_t section_count = field<uint16_t>(header + 2);
  uint16_t optional_size = field<uint16_t>(header + 16);
  size_t optional_offset = pe_offset + 4 + kFileHeaderSize;
  size_t sections_offset = optional_offset + optional_size;
  if (optional_size < kOptionalDataDirectories || sections_offset > size ||
      (size - sections_offset) / kSectionHeaderSize < section_count) {
    return false;
  }
  if (field<uint16_t>(file + optional_offset) != kOptionalMagicPe32Plus) return false;
  *out = Image{header,
               file + optional_offset,
               file + sections_offset,
               section_count,
               optional_size,
               field<uint64_t>(file + optional_offset + kOptionalImageBase)};
  return true;
}

}  // namespace heapscope::prof::pe
