// The kernel's vDSO (Linux): functions the kernel maps into every process, found here by name
// in its ELF image. Called directly, they map no page of libc's code: through libc's
// clock_gettime wrapper, a program that never read the clock itself had a 64-128 KiB window
// of libc's code mapped for the engine's purge deadlines (docs/allocator.md, "The library's
// own pages").
#pragma once

namespace heapscope::os {

// The address of the function `name` in the vDSO; nullptr when there is no vDSO (as under
// some emulators), it is not a 64-bit ELF image with a symbol hash table, or it has no such
// function. Reads only the image, allocates nothing, calls nothing.
void* vdso_function(const char* name);

}  // namespace heapscope::os
