// A named function in a shared library (libhs_profile_demo.so), so the reader tests cover a
// module other than the main executable.
#pragma once

#include <cstdint>

extern "C" {
// Returns a return address inside itself.
uintptr_t demo_library_call(void);
}
