#include "harness/app/program_file.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

namespace heapscope::harness {
namespace {

// Reads exactly `n` bytes at `offset`; false on a short read.
bool read_at(int fd, void* out, std::size_t n, std::uint64_t offset) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = pread(fd, p, n, static_cast<off_t>(offset));
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

std::optional<std::string> read_blob(int fd, std::uint64_t offset, std::uint64_t size) {
  constexpr std::uint64_t kMaxTable = 256ull << 20;  // symbol tables larger than this: skip
  if (size > kMaxTable) return std::nullopt;
  std::string s(size, '\0');
  if (!read_at(fd, s.data(), size, offset)) return std::nullopt;
  return s;
}

// What a defined symbol of the executable says about its allocator, or "".
std::string symbol_meaning(const std::string& name) {
  if (name == "__rg_alloc") return "__rg_alloc (a Rust #[global_allocator])";
  if (name == "_rjem_malloc" || name == "_rjem_je_malloc") {
    return name + " (jemalloc linked into a Rust binary)";
  }
  if (name == "mi_malloc") return "mi_malloc (mimalloc linked into the executable)";
  if (name == "je_malloc") return "je_malloc (jemalloc linked into the executable)";
  if (name == "tc_malloc") return "tc_malloc (tcmalloc linked into the executable)";
  return "";
}

// Scans one symbol table section (SHT_SYMTAB or SHT_DYNSYM) for allocator symbols; the
// malloc-family functions count only when exported (they then win symbol lookup).
void scan_symbols(int fd, const Elf64_Shdr& table, const Elf64_Shdr& strings, bool exported,
                  std::set<std::string>* found, std::set<std::string>* exported_entries,
                  std::set<std::string>* imported) {
  static const std::set<std::string> kEntries = {"malloc", "free", "calloc", "realloc"};
  // Functions only a particular allocator library has: a program importing them is linked
  // against that library, and these calls reach it whatever malloc is preloaded.
  static const std::set<std::string> kExtendedApi = {"mallctl",
                                                     "mallctlnametomib",
                                                     "mallctlbymib",
                                                     "nallocx",
                                                     "mallocx",
                                                     "rallocx",
                                                     "xallocx",
                                                     "sallocx",
                                                     "dallocx",
                                                     "sdallocx",
                                                     "malloc_stats_print",
                                                     "mi_malloc",
                                                     "mi_free",
                                                     "mi_stats_print",
                                                     "tc_malloc",
                                                     "tc_free",
                                                     "MallocExtension_GetNumericProperty"};
  if (table.sh_entsize != sizeof(Elf64_Sym)) return;
  const auto syms = read_blob(fd, table.sh_offset, table.sh_size);
  const auto names = read_blob(fd, strings.sh_offset, strings.sh_size);
  if (!syms || !names) return;
  const std::size_t count = syms->size() / sizeof(Elf64_Sym);
  for (std::size_t i = 0; i < count; ++i) {
    Elf64_Sym sym;
    std::memcpy(&sym, syms->data() + i * sizeof sym, sizeof sym);
    if (sym.st_name >= names->size()) continue;
    const std::string name = names->c_str() + sym.st_name;
    if (sym.st_shndx == SHN_UNDEF) {
      if (exported && kExtendedApi.contains(name)) imported->insert(name);
      continue;
    }
    if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC) continue;
    if (exported && kEntries.contains(name)) exported_entries->insert(name);
    const std::string meaning = symbol_meaning(name);
    if (!meaning.empty()) found->insert(meaning);
  }
}

void inspect_elf(int fd, ProgramFile* p) {
  Elf64_Ehdr eh;
  if (!read_at(fd, &eh, sizeof eh, 0) || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    p->dynamic = true;  // a 32-bit ELF: not inspected further; the probe decides
    return;
  }
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!read_at(fd, &ph, sizeof ph, eh.e_phoff + std::uint64_t{i} * eh.e_phentsize)) break;
    if (ph.p_type == PT_INTERP) p->dynamic = true;
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    if (!read_at(fd, &sections[i], sizeof(Elf64_Shdr),
                 eh.e_shoff + std::uint64_t{i} * eh.e_shentsize)) {
      return;
    }
  }
  if (eh.e_shstrndx >= sections.size()) return;
  const auto section_names =
      read_blob(fd, sections[eh.e_shstrndx].sh_offset, sections[eh.e_shstrndx].sh_size);
  if (!section_names) return;
  std::set<std::string> found;
  std::set<std::string> entries;
  std::set<std::string> imported;
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_name < section_names->size()) {
      const std::string name = section_names->c_str() + s.sh_name;
      if (name == ".go.buildinfo" || name == ".note.go.buildid") p->go = true;
    }
    if ((s.sh_type == SHT_SYMTAB || s.sh_type == SHT_DYNSYM) && s.sh_link < sections.size()) {
      scan_symbols(fd, s, sections[s.sh_link], s.sh_type == SHT_DYNSYM, &found, &entries,
                   &imported);
    }
  }
  p->allocator_symbols.assign(found.begin(), found.end());
  p->imported_allocator_api.assign(imported.begin(), imported.end());
  if (!entries.empty()) {
    std::string list;
    for (const std::string& e : entries) list += (list.empty() ? "" : ", ") + e;
    p->allocator_symbols.push_back("the executable exports " + list);
  }
}

}  // namespace

std::string resolve_command(const std::string& command, const std::string& cwd,
                            const std::string& path_env) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (command.empty()) return "";
  if (command.find('/') != std::string::npos) {
    fs::path p = command;
    if (p.is_relative()) p = (cwd.empty() ? fs::current_path(ec) : fs::path(cwd)) / p;
    return fs::exists(p, ec) ? fs::absolute(p, ec).lexically_normal().string() : "";
  }
  std::size_t start = 0;
  while (start <= path_env.size()) {
    std::size_t end = path_env.find(':', start);
    if (end == std::string::npos) end = path_env.size();
    const std::string dir = end > start ? path_env.substr(start, end - start) : ".";
    const fs::path candidate = fs::path(dir) / command;
    if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) {
      return fs::absolute(candidate, ec).string();
    }
    start = end + 1;
  }
  return "";
}

std::string path_variable(const std::vector<std::string>& env) {
  for (const std::string& e : env) {
    if (e.rfind("PATH=", 0) == 0) return e.substr(5);
  }
  return "/usr/bin:/bin";
}

ProgramFile inspect_program_file(const std::string& path) {
  ProgramFile p;
  p.path = path;
  struct stat st {};
  if (path.empty() || stat(path.c_str(), &st) != 0) {
    p.error = "not found";
    return p;
  }
  if (!S_ISREG(st.st_mode) || access(path.c_str(), X_OK) != 0) {
    p.error = "not an executable file";
    return p;
  }
  p.setuid = (st.st_mode & S_ISUID) != 0;
  p.setgid = (st.st_mode & S_ISGID) != 0;
  p.capabilities = getxattr(path.c_str(), "security.capability", nullptr, 0) > 0;
  p.secure_exec = (p.setuid && st.st_uid != geteuid()) || (p.setgid && st.st_gid != getegid()) ||
                  p.capabilities;

  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    p.error = std::string("cannot read: ") + std::strerror(errno);
    return p;
  }
  char head[256] = {};
  const ssize_t n = pread(fd, head, sizeof head - 1, 0);
  if (n >= 2 && head[0] == '#' && head[1] == '!') {
    p.script = true;
    const std::string line(head + 2, std::strcspn(head + 2, "\n"));
    const std::size_t b = line.find_first_not_of(" \t");
    if (b != std::string::npos) p.interpreter = line.substr(b, line.find_first_of(" \t", b) - b);
  } else if (n >= 4 && std::memcmp(head, ELFMAG, SELFMAG) == 0) {
    p.elf = true;
    inspect_elf(fd, &p);
  }
  close(fd);
  return p;
}

std::vector<ProgramFile> inspect_program_chain(const std::string& path) {
  std::vector<ProgramFile> chain{inspect_program_file(path)};
  while (chain.size() < 4 && chain.back().script && !chain.back().interpreter.empty()) {
    chain.push_back(inspect_program_file(chain.back().interpreter));
  }
  return chain;
}

}  // namespace heapscope::harness
