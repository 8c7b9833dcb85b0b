// Windows module enumeration (platform.h): the loader's module list (K32EnumProcessModules into
// a stack array; the main executable comes first) and each image's section table read from
// its mapped headers, without allocating. One entry per executable section, as on Linux one
// per executable segment. The build ID is the image's CodeView record (GUID and age, what
// symbol servers key on), present when the image was linked with --build-id.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// windows.h first: psapi.h uses its types.
#include <psapi.h>
#include <string.h>

#include "platform/platform.h"
#include "support/format.h"

namespace heapscope::os {
namespace {

constexpr DWORD kMaxModules = 1024;
constexpr int kPathChars = 1024;
constexpr DWORD kCodeViewRsds = 0x53445352;  // "RSDS"

struct CodeViewRecord {
  DWORD signature;
  BYTE guid[16];
  DWORD age;
};

const IMAGE_NT_HEADERS64* nt_headers(const BYTE* base) {
  const auto* dos = reinterpret_cast<const IMAGE_DOS_HEADER*>(base);
  if (dos->e_magic != IMAGE_DOS_SIGNATURE) return nullptr;
  const auto* nt = reinterpret_cast<const IMAGE_NT_HEADERS64*>(base + dos->e_lfanew);
  if (nt->Signature != IMAGE_NT_SIGNATURE ||
      nt->OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR64_MAGIC) {
    return nullptr;
  }
  return nt;
}

// Lowercase hex of the CodeView GUID followed by the age, or "" without a CodeView record.
void read_build_id(const BYTE* base, const IMAGE_NT_HEADERS64* nt, char (&hex)[41]) {
  hex[0] = '\0';
  const IMAGE_DATA_DIRECTORY& dir = nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_DEBUG];
  if (dir.VirtualAddress == 0 || dir.Size < sizeof(IMAGE_DEBUG_DIRECTORY)) return;
  const auto* entries = reinterpret_cast<const IMAGE_DEBUG_DIRECTORY*>(base + dir.VirtualAddress);
  for (size_t i = 0; i < dir.Size / sizeof(IMAGE_DEBUG_DIRECTORY); ++i) {
    const IMAGE_DEBUG_DIRECTORY& entry = entries[i];
    if (entry.Type != IMAGE_DEBUG_TYPE_CODEVIEW || entry.AddressOfRawData == 0 ||
        entry.SizeOfData < sizeof(CodeViewRecord)) {
      continue;
    }
    CodeViewRecord record;
    memcpy(&record, base + entry.AddressOfRawData, sizeof record);
    if (record.signature != kCodeViewRsds) continue;
    size_t n = fmt::hex_bytes(record.guid, sizeof record.guid, hex);
    BYTE age[4];
    memcpy(age, &record.age, sizeof age);
    fmt::hex_bytes(age, sizeof age, hex + n);
    return;
  }
}

// Returns false when the callback asked to stop.
bool visit_module(HMODULE module, bool is_main, ModuleSegmentFn fn, void* arg) {
  const auto* base = reinterpret_cast<const BYTE*>(module);
  const IMAGE_NT_HEADERS64* nt = nt_headers(base);
  if (nt == nullptr) return true;
  wchar_t wide[kPathChars];
  DWORD n = GetModuleFileNameW(module, wide, kPathChars);
  if (n == 0 || n >= static_cast<DWORD>(kPathChars)) return true;
  char path[3 * kPathChars];
  if (WideCharToMultiByte(CP_UTF8, 0, wide, -1, path, sizeof path, nullptr, nullptr) <= 0) {
    return true;
  }
  char build_id[41];
  read_build_id(base, nt, build_id);
  const IMAGE_SECTION_HEADER* sections = IMAGE_FIRST_SECTION(nt);
  for (WORD i = 0; i < nt->FileHeader.NumberOfSections; ++i) {
    const IMAGE_SECTION_HEADER& section = sections[i];
    if ((section.Characteristics & IMAGE_SCN_MEM_EXECUTE) == 0) continue;
    ModuleSegment segment{
        .path = path,
        .build_id = build_id,
        .start = reinterpret_cast<uintptr_t>(base) + section.VirtualAddress,
        .size = section.Misc.VirtualSize,
        .file_offset = section.PointerToRawData,
        .load_bias = reinterpret_cast<uintptr_t>(base) - nt->OptionalHeader.ImageBase,
        .is_main = is_main,
    };
    if (!fn(segment, arg)) return false;
  }
  return true;
}

}  // namespace

void for_each_module_segment(ModuleSegmentFn fn, void* arg) {
  HMODULE modules[kMaxModules];
  DWORD bytes = 0;
  if (!K32EnumProcessModules(GetCurrentProcess(), modules, sizeof modules, &bytes)) return;
  DWORD count = bytes / sizeof(HMODULE);
  if (count > kMaxModules) count = kMaxModules;  // more than fit: the first kMaxModules
  HMODULE main_module = GetModuleHandleW(nullptr);
  // The list starts with the executable; reported first whatever the order.
  if (!visit_module(main_module, true, fn, arg)) return;
  for (DWORD i = 0; i < count; ++i) {
    if (modules[i] == main_module) continue;
    if (!visit_module(modules[i], false, fn, arg)) return;
  }
}

}  // namespace heapscope::os
