#include "profiler/symbolizer.h"

#include "core/common.h"
#include "platform/platform.h"
#include "profiler/elf_format.h"
#include "profiler/pe_format.h"
#include "support/format.h"

#if HS_PROFILER

#include <string.h>

#include <algorithm>

namespace heapscope::prof {

struct Symbolizer::Symbol {
  uint64_t value;  // link-time address
  uint64_t size;
  const char* name;     // inside the mapped file's string table
  uint32_t preference;  // among aliases at one address the highest wins: global > weak > local
};

struct Symbolizer::ModuleSymbols {
  enum State : uint32_t { kUnloaded = 0, kLoaded, kUnavailable };
  State state;
  uint32_t first;  // index of the first symbol in symbols_
  uint32_t count;
  const void* file;  // the whole ELF file mapped read-only
  size_t file_size;
};

namespace {

uint32_t binding_preference(unsigned char info) {
  switch (elf::symbol_binding(info)) {
    case elf::kBindGlobal:
      return 2;
    case elf::kBindWeak:
      return 1;
    default:
      return 0;
  }
}

bool in_file(size_t file_size, uint64_t offset, uint64_t len) {
  return offset <= file_size && len <= file_size - offset;
}

// The section header table (and the ELF header in *header), or nullptr when the table does
// not lie inside the file.
const elf::SectionHeader* section_headers(const uint8_t* file, size_t file_size,
                                          elf::FileHeader* header) {
  memcpy(header, file, sizeof *header);
  if (header->section_header_entry_size != sizeof(elf::SectionHeader) ||
      !in_file(file_size, header->section_header_offset,
               uint64_t{header->section_header_count} * sizeof(elf::SectionHeader))) {
    return nullptr;
  }
  return reinterpret_cast<const elf::SectionHeader*>(file + header->section_header_offset);
}

// Whether the file's NT_GNU_BUILD_ID note (from its SHT_NOTE sections) is `expected_hex`.
bool build_id_matches(const uint8_t* file, size_t file_size, const char* expected_hex) {
  if (expected_hex[0] == '\0') return true;
  elf::FileHeader header;
  const elf::SectionHeader* sections = section_headers(file, file_size, &header);
  if (sections == nullptr) return false;
  for (size_t s = 0; s < header.section_header_count; ++s) {
    const elf::SectionHeader& section = sections[s];
    if (section.type != elf::kSectionNote || !in_file(file_size, section.offset, section.size)) {
      continue;
    }
    const uint8_t* note = file + section.offset;
    size_t remaining = section.size;
    while (remaining >= sizeof(elf::NoteHeader)) {
      elf::NoteHeader nhdr;
      memcpy(&nhdr, note, sizeof nhdr);
      size_t name_size = (uint64_t{nhdr.name_size} + 3) & ~uint64_t{3};
      size_t desc_size = (uint64_t{nhdr.descriptor_size} + 3) & ~uint64_t{3};
      if (name_size + desc_size > remaining - sizeof nhdr) break;
      const uint8_t* name = note + sizeof nhdr;
      const uint8_t* desc = name + name_size;
      if (nhdr.type == elf::kNoteGnuBuildId && nhdr.name_size == 4 && memcmp(name, "GNU", 4) == 0) {
        // The loaded module's ID is at most kMaxBuildIdBytes: a longer one is another file.
        constexpr size_t kMaxBuildIdBytes = 64;
        if (nhdr.descriptor_size > kMaxBuildIdBytes) return false;
        char actual[2 * kMaxBuildIdBytes + 1];
        fmt::hex_bytes(desc, nhdr.descriptor_size, actual);
        return strcmp(actual, expected_hex) == 0;
      }
      note += sizeof nhdr + name_size + desc_size;
      remaining -= sizeof nhdr + name_size + desc_size;
    }
  }
  return false;  // the module has a build ID and this file has none: not the same file
}

// ---- PE/COFF (Windows images built by MinGW) --------------------------------------------------

// Whether the image's CodeView record (GUID and age, what modules_windows.cc reports) is
// `expected_hex`; an image without one matches only "".
bool pe_build_id_matches(const uint8_t* file, size_t file_size, const pe::Image& image,
                         const char* expected_hex) {
  if (expected_hex[0] == '\0') return true;
  if (pe::kOptionalDataDirectories + (pe::kDebugDirectoryIndex + 1) * 8 > image.optional_size) {
    return false;
  }
  const uint8_t* directory =
      image.optional + pe::kOptionalDataDirectories + pe::kDebugDirectoryIndex * 8;
  uint32_t rva = pe::field<uint32_t>(directory);
  uint32_t size = pe::field<uint32_t>(directory + 4);
  // The directory's RVA to a file offset, through the section that holds it.
  uint64_t offset = 0;
  bool found = false;
  for (uint16_t i = 0; i < image.section_count && !found; ++i) {
    const uint8_t* section = image.sections + i * pe::kSectionHeaderSize;
    uint32_t start = pe::field<uint32_t>(section + 12);
    uint32_t raw_size = pe::field<uint32_t>(section + 16);
    if (rva >= start && rva - start < raw_size) {
      offset = pe::field<uint32_t>(section + 20) + uint64_t{rva - start};
      found = true;
    }
  }
  if (!found || !in_file(file_size, offset, size)) return false;
  for (uint32_t i = 0; i < size / pe::kDebugEntrySize; ++i) {
    const uint8_t* entry = file + offset + i * pe::kDebugEntrySize;
    if (pe::field<uint32_t>(entry + 12) != pe::kDebugTypeCodeView) continue;
    uint32_t data_size = pe::field<uint32_t>(entry + 16);
    uint32_t data_offset = pe::field<uint32_t>(entry + 24);
    if (data_size < 24 || !in_file(file_size, data_offset, 24)) continue;
    const uint8_t* record = file + data_offset;
    if (pe::field<uint32_t>(record) != pe::kCodeViewRsds) continue;
    char actual[41];
    size_t n = fmt::hex_bytes(record + 4, 16, actual);
    fmt::hex_bytes(record + 20, 4, actual + n);
    return strcmp(actual, expected_hex) == 0;
  }
  return false;
}

}  // namespace

Symbolizer::~Symbolizer() {
  for (size_t i = 0; i < module_count_; ++i) {
    ModuleSymbols* state = module_state(i);
    if (state->file != nullptr) os::unmap(const_cast<void*>(state->file), state->file_size);
  }
}

bool Symbolizer::init(size_t module_count) {
  size_t bytes = module_count * sizeof(ModuleSymbols);
  uint8_t* memory = modules_.reserve(bytes);
  if (memory == nullptr && bytes != 0) return false;
  if (bytes != 0) memset(memory, 0, bytes);
  modules_.commit(bytes);
  module_count_ = module_count;
  return true;
}

Symbolizer::ModuleSymbols* Symbolizer::module_state(size_t module) {
  return reinterpret_cast<ModuleSymbols*>(modules_.data()) + module;
}

const Symbolizer::Symbol* Symbolizer::symbols() const {
  return reinterpret_cast<const Symbol*>(symbols_.data());
}

size_t Symbolizer::symbol_count() const { return symbols_.size() / sizeof(Symbol); }

// Drops a partly added table (clear() keeps the memory, so the first `count` stay intact).
void Symbolizer::truncate_symbols(size_t count) {
  symbols_.clear();
  symbols_.commit(count * sizeof(Symbol));
}

// Appends the defined FUNC (and IFUNC) symbols of the first section of `section_type`.
// Every offset is checked against the file size: the file is trusted no more than any input.
bool Symbolizer::add_function_symbols(const uint8_t* file, size_t file_size,
                                      uint32_t section_type) {
  elf::FileHeader header;
  const elf::SectionHeader* sections = section_headers(file, file_size, &header);
  if (sections == nullptr) return false;
  for (size_t s = 0; s < header.section_header_count; ++s) {
    const elf::SectionHeader& table = sections[s];
    if (table.type != section_type || table.entry_size != sizeof(elf::Symbol) ||
        table.link >= header.section_header_count ||
        !in_file(file_size, table.offset, table.size)) {
      continue;
    }
    const elf::SectionHeader& strings = sections[table.link];
    if (!in_file(file_size, strings.offset, strings.size)) continue;
    const auto* names = reinterpret_cast<const char*>(file + strings.offset);
    const auto* syms = reinterpret_cast<const elf::Symbol*>(file + table.offset);
    size_t added = 0;
    for (size_t i = 0; i < table.size / sizeof(elf::Symbol); ++i) {
      const elf::Symbol& sym = syms[i];
      unsigned type = elf::symbol_type(sym.info);
      if ((type != elf::kTypeFunction && type != elf::kTypeIndirectFunction) ||
          sym.section_index == elf::kUndefinedSection || sym.value == 0 ||
          sym.name >= strings.size) {
        continue;
      }
      const char* name = names + sym.name;
      if (name[0] == '\0' || memchr(name, '\0', strings.size - sym.name) == nullptr) continue;
      Symbol symbol{sym.value, sym.size, name, binding_preference(sym.info)};
      if (!symbols_.append(&symbol, sizeof symbol)) return false;
      ++added;
    }
    return added > 0;
  }
  return false;
}

// Appends the function symbols of the image's COFF symbol table (MinGW's linker keeps it unless
// the image is stripped): external, static and weak symbols of type "function" in a section,
// at their link-time address (image base + section RVA + value). COFF gives no sizes: each runs
// to the end of its section here, and load() cuts it at the next symbol.
bool Symbolizer::add_coff_function_symbols(const uint8_t* file, size_t file_size) {
  pe::Image image;
  if (!pe::parse_image(file, file_size, &image)) return false;
  uint32_t table_offset = pe::field<uint32_t>(image.file_header + 8);
  uint32_t count = pe::field<uint32_t>(image.file_header + 12);
  if (table_offset == 0 || !in_file(file_size, table_offset, uint64_t{count} * pe::kSymbolSize)) {
    return false;
  }
  // The string table follows the symbols; its first word is its size, that word included.
  uint64_t strings_offset = table_offset + uint64_t{count} * pe::kSymbolSize;
  uint32_t strings_size = 0;
  if (in_file(file_size, strings_offset, 4))
    strings_size = pe::field<uint32_t>(file + strings_offset);
  if (!in_file(file_size, strings_offset, strings_size)) strings_size = 0;
  const auto* strings = reinterpret_cast<const char*>(file + strings_offset);
  size_t added = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* sym = file + table_offset + uint64_t{i} * pe::kSymbolSize;
    uint8_t storage = sym[16];
    int16_t section = pe::field<int16_t>(sym + 12);
    uint16_t type = pe::field<uint16_t>(sym + 14);
    uint32_t value = pe::field<uint32_t>(sym + 8);
    i += sym[17];  // auxiliary records follow their symbol
    if (type != pe::kTypeFunction || section <= 0 || section > image.section_count) continue;
    uint32_t preference;
    if (storage == pe::kClassExternal) {
      preference = 2;
    } else if (storage == pe::kClassWeakExternal) {
      preference = 1;
    } else if (storage == pe::kClassStatic) {
      preference = 0;
    } else {
      continue;
    }
    const char* name;
    if (pe::field<uint32_t>(sym) == 0) {  // long name: an offset into the string table
      uint32_t at = pe::field<uint32_t>(sym + 4);
      if (at < 4 || at >= strings_size ||
          memchr(strings + at, '\0', strings_size - at) == nullptr) {
        continue;
      }
      name = strings + at;
    } else {
      // A short name fills 8 bytes and is NUL-terminated only when shorter: one of exactly 8
      // characters cannot be handed out as a C string from the mapped file, so it stays unnamed.
      if (memchr(sym, '\0', 8) == nullptr) continue;
      name = reinterpret_cast<const char*>(sym);
    }
    if (name[0] == '\0') continue;
    const uint8_t* header = image.sections + (section - 1) * pe::kSectionHeaderSize;
    uint64_t section_start = image.image_base + pe::field<uint32_t>(header + 12);
    uint64_t section_end = section_start + pe::field<uint32_t>(header + 8);
    uint64_t address = section_start + value;
    if (address >= section_end) continue;
    Symbol symbol{address, section_end - address, name, preference};
    if (!symbols_.append(&symbol, sizeof symbol)) return false;
    ++added;
  }
  return added > 0;
}

void Symbolizer::load(ModuleSymbols& state, const char* path, const char* build_id) {
  state.state = ModuleSymbols::kUnavailable;
  size_t file_size = 0;
  const void* file = os::map_file(path, sizeof(elf::FileHeader), &file_size);
  if (file == nullptr) return;
  state.file = file;
  state.file_size = file_size;

  const auto* bytes = static_cast<const uint8_t*>(file);
  size_t first = symbol_count();
  bool have_symbols = false;
  pe::Image image;
  const bool is_pe = pe::parse_image(bytes, state.file_size, &image);
  if (is_pe) {
    if (!pe_build_id_matches(bytes, state.file_size, image, build_id)) return;
    have_symbols = add_coff_function_symbols(bytes, state.file_size);
  } else {
    if (memcmp(bytes, elf::kMagic, sizeof elf::kMagic) != 0 ||
        bytes[elf::kClassIndex] != elf::kClass64 ||
        !build_id_matches(bytes, state.file_size, build_id)) {
      return;
    }
    have_symbols = add_function_symbols(bytes, state.file_size, elf::kSectionSymbolTable);
    if (!have_symbols) {  // stripped: the dynamic symbols still name the exported functions
      truncate_symbols(first);
      have_symbols = add_function_symbols(bytes, state.file_size, elf::kSectionDynamicSymbols);
    }
  }
  if (!have_symbols) {
    truncate_symbols(first);
    return;
  }
  auto* begin = reinterpret_cast<Symbol*>(symbols_.data()) + first;
  auto* end = reinterpret_cast<Symbol*>(symbols_.data()) + symbol_count();
  std::sort(begin, end, [](const Symbol& a, const Symbol& b) {
    if (a.value != b.value) return a.value < b.value;
    if (a.preference != b.preference) return a.preference < b.preference;
    return a.size < b.size;
  });
  if (is_pe) {
    // A COFF symbol ends where the next one at a higher address starts (or at its section's end).
    for (Symbol* symbol = begin; symbol != end; ++symbol) {
      const Symbol* next = symbol + 1;
      while (next != end && next->value == symbol->value) ++next;
      if (next != end && next->value - symbol->value < symbol->size) {
        symbol->size = next->value - symbol->value;
      }
    }
  }
  state.first = static_cast<uint32_t>(first);
  state.count = static_cast<uint32_t>(symbol_count() - first);
  state.state = ModuleSymbols::kLoaded;
}

bool Symbolizer::find(size_t module, const char* path, const char* build_id, uint64_t file_address,
                      FoundSymbol* found) {
  if (module >= module_count_) return false;
  ModuleSymbols& state = *module_state(module);
  if (state.state == ModuleSymbols::kUnloaded) load(state, path, build_id);
  if (state.state != ModuleSymbols::kLoaded) return false;
  const Symbol* begin = symbols() + state.first;
  const Symbol* end = begin + state.count;
  // The last symbol starting at or below the address (the preferred alias sorts last).
  const Symbol* after =
      std::upper_bound(begin, end, file_address,
                       [](uint64_t address, const Symbol& s) { return address < s.value; });
  if (after == begin) return false;
  const Symbol& symbol = after[-1];
  bool contains =
      symbol.size == 0 ? file_address == symbol.value : file_address - symbol.value < symbol.size;
  if (!contains) return false;
  found->key = static_cast<uint32_t>(&symbol - symbols());
  found->name = symbol.name;
  return true;
}

}  // namespace heapscope::prof

#endif  // HS_PROFILER
