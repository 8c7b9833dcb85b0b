// The function the shared libraries name as their DT_FINI (engine/CMakeLists.txt, -fini=).
// The C runtime's own _fini in a shared library is empty (the engine's exit work runs from
// .fini_array), but it sits on the last page of the library's code, and calling it at exit
// would map the 64 KiB of code around it that nothing else runs; this one sits with the code
// every program runs (platform/code_placement.h, HS_HOT_TEXT).
#include "platform/code_placement.h"

extern "C" __attribute__((visibility("hidden"))) HS_HOT_TEXT void heapscope_elf_fini() {}
