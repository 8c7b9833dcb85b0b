// The parts of the 64-bit ELF file format the symbolizer reads (header, section headers, symbols,
// notes), declared here from the ELF specification rather than taken from the C library's
// <elf.h>: ELF files are data, so reading one must not depend on the OS the engine runs on
// (MinGW has no <elf.h>).
#pragma once

#include <stdint.h>

namespace heapscope::prof::elf {

inline constexpr unsigned char kMagic[4] = {0x7f, 'E', 'L', 'F'};
inline constexpr size_t kClassIndex = 4;  // e_ident[EI_CLASS]
inline constexpr unsigned char kClass64 = 2;

struct FileHeader {
  unsigned char ident[16];
  uint16_t type;
  uint16_t machine;
  uint32_t version;
  uint64_t entry;
  uint64_t program_header_offset;
  uint64_t section_header_offset;
  uint32_t flags;
  uint16_t header_size;
  uint16_t program_header_entry_size;
  uint16_t program_header_count;
  uint16_t section_header_entry_size;
  uint16_t section_header_count;
  uint16_t section_name_index;
};

struct SectionHeader {
  uint32_t name;
  uint32_t type;
  uint64_t flags;
  uint64_t address;
  uint64_t offset;
  uint64_t size;
  uint32_t link;
  uint32_t info;
  uint64_t alignment;
  uint64_t entry_size;
};

struct Symbol {
  uint32_t name;
  unsigned char info;  // binding << 4 | type
  unsigned char other;
  uint16_t section_index;
  uint64_t value;
  uint64_t size;
};

struct NoteHeader {
  uint32_t name_size;
  uint32_t descriptor_size;
  uint32_t type;
};

inline constexpr uint32_t kSectionSymbolTable = 2;      // SHT_SYMTAB
inline constexpr uint32_t kSectionNote = 7;             // SHT_NOTE
inline constexpr uint32_t kSectionDynamicSymbols = 11;  // SHT_DYNSYM
inline constexpr uint16_t kUndefinedSection = 0;        // SHN_UNDEF
inline constexpr unsigned kBindGlobal = 1;              // STB_GLOBAL
inline constexpr unsigned kBindWeak = 2;                // STB_WEAK
inline constexpr unsigned kTypeFunction = 2;            // STT_FUNC
inline constexpr unsigned kTypeIndirectFunction = 10;   // STT_GNU_IFUNC
inline constexpr uint32_t kNoteGnuBuildId = 3;          // NT_GNU_BUILD_ID

inline unsigned symbol_binding(unsigned char info) { return info >> 4; }
inline unsigned symbol_type(unsigned char info) { return info & 0xf; }

static_assert(sizeof(FileHeader) == 64 && sizeof(SectionHeader) == 64 && sizeof(Symbol) == 24 &&
              sizeof(NoteHeader) == 12);

}  // namespace heapscope::prof::elf
