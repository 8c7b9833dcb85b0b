# 64-bit Arm Linux with Debian's cross toolchain (g++-aarch64-linux-gnu); the tests run under
# qemu-aarch64 user-mode emulation (qemu-user), which CTest prefixes to every test command.
# Used by ci/cross-test.sh arm64 (engine only: -DHEAPSCOPE_ENGINE_ONLY=ON).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(HEAPSCOPE_TARGET_TRIPLET aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${HEAPSCOPE_TARGET_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${HEAPSCOPE_TARGET_TRIPLET}-g++)
# Target libraries and headers: the cross sysroot, and Debian multiarch paths (an arm64
# -dev package installed with dpkg --add-architecture lands in /usr/lib/aarch64-linux-gnu).
set(CMAKE_LIBRARY_ARCHITECTURE ${HEAPSCOPE_TARGET_TRIPLET})
set(CMAKE_FIND_ROOT_PATH /usr/${HEAPSCOPE_TARGET_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# -L: where the emulated dynamic loader and libraries live (the cross toolchain's sysroot).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/${HEAPSCOPE_TARGET_TRIPLET})
