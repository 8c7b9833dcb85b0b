# Everything that makes heapscope usable outside its build tree: install rules and the CMake /
# pkg-config packages, the Debian packages, and the Rust crate's tests.
include(${CMAKE_CURRENT_LIST_DIR}/HeapscopeInstall.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/tests/HeapscopeInstallTests.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/HeapscopePackaging.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/HeapscopeRust.cmake)
