# 64-bit Windows with Debian's MinGW-w64 cross toolchain (g++-mingw-w64-x86-64-posix: the POSIX
# threads flavour, which std::thread needs); the tests run under Wine (wine64), which CTest
# prefixes to every test command through wine-run.sh. Used by ci/cross-test.sh windows (engine
# only: -DHEAPSCOPE_ENGINE_ONLY=ON). engine/docs/platforms.md, "Windows".
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(HEAPSCOPE_TARGET_TRIPLET x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${HEAPSCOPE_TARGET_TRIPLET}-gcc-posix)
set(CMAKE_CXX_COMPILER ${HEAPSCOPE_TARGET_TRIPLET}-g++-posix)
set(CMAKE_RC_COMPILER ${HEAPSCOPE_TARGET_TRIPLET}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${HEAPSCOPE_TARGET_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Executables and DLLs carry the C++ runtime, libgcc and winpthreads statically, so Wine needs no
# DLL search path beyond the one folder ci/cross-test.sh builds every .exe and .dll into.
set(CMAKE_EXE_LINKER_FLAGS_INIT -static)
set(CMAKE_SHARED_LINKER_FLAGS_INIT -static)
# Wine with a private prefix inside the build folder, headless and quiet (wine-run.sh).
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/wine-run.sh)
