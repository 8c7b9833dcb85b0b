# GoogleTest for the tests. A native build uses the installed package (libgtest-dev). A cross
# build cannot link the host's libraries, and Debian ships no GoogleTest built for other
# targets, so there it is compiled from the Debian `googletest` source package
# (/usr/src/googletest, or HEAPSCOPE_GTEST_SOURCE_DIR) with the cross compiler, as part of this
# build: nothing is fetched or vendored.
if(NOT CMAKE_CROSSCOMPILING)
  find_package(GTest REQUIRED)
  return()
endif()
find_package(GTest QUIET)
if(GTest_FOUND)
  return()
endif()
set(HEAPSCOPE_GTEST_SOURCE_DIR /usr/src/googletest CACHE PATH
    "GoogleTest sources compiled for a cross build (Debian package googletest)")
if(NOT EXISTS ${HEAPSCOPE_GTEST_SOURCE_DIR}/CMakeLists.txt)
  message(FATAL_ERROR "Cross build: no GoogleTest for the target and no sources at "
          "${HEAPSCOPE_GTEST_SOURCE_DIR} (install the Debian package googletest, or set "
          "HEAPSCOPE_GTEST_SOURCE_DIR)")
endif()
set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
# Linked statically into each test executable, so the emulator needs no extra library path.
set(gtest_force_shared_crt OFF CACHE BOOL "" FORCE)
set(heapscope_saved_shared ${BUILD_SHARED_LIBS})
set(BUILD_SHARED_LIBS OFF)
add_subdirectory(${HEAPSCOPE_GTEST_SOURCE_DIR} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
set(BUILD_SHARED_LIBS ${heapscope_saved_shared})
# The names find_package(GTest) gives, so the rest of the build does not care where it came from.
foreach(library gtest gtest_main)
  if(NOT TARGET GTest::${library})
    add_library(GTest::${library} ALIAS ${library})
  endif()
endforeach()
