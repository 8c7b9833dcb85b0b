// Function names for profile locations, read at dump time from the modules' own symbol tables
// (ELF: .symtab, else .dynsym; PE: the COFF symbol table of a MinGW image), so a profile names C++
// functions even where the reader cannot (go tool pprof neither demangles nor names out-of-line
// member functions). One Symbolizer lives for one dump: files stay mapped and sorted tables cached
// until then.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "profiler/os_buffer.h"

namespace heapscope::prof {

struct FoundSymbol {
  uint32_t key;      // unique per (module, symbol) within this Symbolizer; < symbol_count()
  const char* name;  // the mangled name, valid while the Symbolizer lives
};

class Symbolizer {
 public:
  Symbolizer() = default;
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Prepares per-module state for modules 0..module_count-1.
  bool init(size_t module_count);
  // The FUNC symbol of module `module` (file at `path`) containing link-time address
  // `file_address` (runtime address minus the load bias). False when none does, or when the
  // file's build ID differs from `build_id` (lowercase hex of the loaded module's; "" skips
  // the check): a library replaced on disk since it was loaded would give wrong names.
  bool find(size_t module, const char* path, const char* build_id, uint64_t file_address,
            FoundSymbol* found);
  size_t symbol_count() const;

 private:
  struct Symbol;
  struct ModuleSymbols;
  ModuleSymbols* module_state(size_t module);
  const Symbol* symbols() const;
  void load(ModuleSymbols& state, const char* path, const char* build_id);
  void truncate_symbols(size_t count);
  bool add_function_symbols(const uint8_t* file, size_t file_size, uint32_t section_type);
  bool add_coff_function_symbols(const uint8_t* file, size_t file_size);

  OsBuffer modules_;  // ModuleSymbols per module
  OsBuffer symbols_;  // the loaded modules' sorted Symbol arrays, back to back
  size_t module_count_ = 0;
};

}  // namespace heapscope::prof
