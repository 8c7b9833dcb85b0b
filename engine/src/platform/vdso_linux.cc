// Finding a function in the vDSO (vdso_linux.h): its program headers give the load bias and
// the dynamic section, which gives the symbol and string tables and the SysV hash table,
// whose chain count is the number of symbols.
#include "platform/vdso_linux.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>

#include <cstdint>

#include "platform/code_placement.h"

namespace heapscope::os {
namespace {

// strcmp without libc: its optimized variants lie in libc code no other engine call maps.
HS_HOT_TEXT bool same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

}  // namespace

// Run once, at the first clock read of a program: in the code every program maps.
HS_HOT_TEXT void* vdso_function(const char* name) {
  const uintptr_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return nullptr;
  const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(base);
  const unsigned char* ident = header->e_ident;
  if (ident[EI_MAG0] != ELFMAG0 || ident[EI_MAG1] != ELFMAG1 || ident[EI_MAG2] != ELFMAG2 ||
      ident[EI_MAG3] != ELFMAG3 || ident[EI_CLASS] != ELFCLASS64) {
    return nullptr;
  }
  const auto* segments = reinterpret_cast<const ElfW(Phdr)*>(base + header->e_phoff);
  uintptr_t bias = 0;
  bool loaded = false;
  const ElfW(Dyn)* dynamic = nullptr;
  for (unsigned i = 0; i < header->e_phnum; ++i) {
    if (segments[i].p_type == PT_LOAD && !loaded) {
      bias = base + segments[i].p_offset - segments[i].p_vaddr;
      loaded = true;
    } else if (segments[i].p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + segments[i].p_offset);
    }
  }
  if (!loaded || dynamic == nullptr) return nullptr;
  const ElfW(Sym)* symbols = nullptr;
  const char* names = nullptr;
  const Elf32_Word* hash = nullptr;  // 32-bit words on 64-bit Linux targets too
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    if (entry->d_tag == DT_SYMTAB)
      symbols = reinterpret_cast<const ElfW(Sym)*>(bias + entry->d_un.d_ptr);
    if (entry->d_tag == DT_STRTAB) names = reinterpret_cast<const char*>(bias + entry->d_un.d_ptr);
    if (entry->d_tag == DT_HASH)
      hash = reinterpret_cast<const Elf32_Word*>(bias + entry->d_un.d_ptr);
  }
  if (symbols == nullptr || names == nullptr || hash == nullptr) return nullptr;
  const Elf32_Word count = hash[1];  // nchain: one chain slot per symbol
  for (Elf32_Word i = 0; i < count; ++i) {
    const ElfW(Sym)& symbol = symbols[i];
    if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_shndx == SHN_UNDEF) continue;
    if (same_name(names + symbol.st_name, name))
      return reinterpret_cast<void*>(bias + symbol.st_value);
  }
  return nullptr;
}

}  // namespace heapscope::os
