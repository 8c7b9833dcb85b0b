# Debian packages built by CPack from the install components (see cmake/packaging.md):
#   libheapscope0     runtime   the shared engine libraries (sonames libheapscope*.so.0)
#   libheapscope-dev  dev       headers, static library, .so links, CMake package, .pc files
#   heapscope-tools   tools     hsbench, hs-workload, hs-probe and the `hsbench app` shim
# `cpack --config CPackConfig.cmake` in the build directory writes the three .deb files.
set(HEAPSCOPE_PACKAGE_CONTACT "heapscope authors <heapscope@users.noreply.github.com>"
    CACHE STRING "Maintainer field of the Debian packages")
set(HEAPSCOPE_PACKAGE_DOC_DIR ${PROJECT_BINARY_DIR}/packaging)
set(HEAPSCOPE_DEB_VERSION ${PROJECT_VERSION})
set(HEAPSCOPE_DEB_PACKAGES runtime:libheapscope0 dev:libheapscope-dev tools:heapscope-tools)

# Debian's per-package documents: copyright (machine-readable, from LICENSE) and a
# max-compressed, timestamp-free changelog. Only packages install them (EXCLUDE_FROM_ALL keeps
# them out of a plain `cmake --install`).
file(READ ${PROJECT_SOURCE_DIR}/LICENSE license_text)
string(STRIP "${license_text}" license_text)
string(REGEX REPLACE "\n\n" "\n.\n" license_text "${license_text}")
string(REGEX REPLACE "\n" "\n " license_text "${license_text}")
string(REGEX MATCH "Copyright \\(c\\) ([^\n]*)" _ "${license_text}")
set(copyright_holder "${CMAKE_MATCH_1}")
string(TIMESTAMP changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(MAKE_DIRECTORY ${HEAPSCOPE_PACKAGE_DOC_DIR})
file(WRITE ${HEAPSCOPE_PACKAGE_DOC_DIR}/copyright
  "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
  "Upstream-Name: heapscope\n\n"
  "Files: *\nCopyright: ${copyright_holder}\nLicense: MIT\n ${license_text}\n")
file(WRITE ${HEAPSCOPE_PACKAGE_DOC_DIR}/changelog
  "heapscope (${HEAPSCOPE_DEB_VERSION}) unstable; urgency=medium\n\n"
  "  * Binary packages built by CPack from the heapscope sources.\n\n"
  " -- ${HEAPSCOPE_PACKAGE_CONTACT}  ${changelog_date}\n")
execute_process(COMMAND gzip -9 -n -c ${HEAPSCOPE_PACKAGE_DOC_DIR}/changelog
  OUTPUT_FILE ${HEAPSCOPE_PACKAGE_DOC_DIR}/changelog.gz COMMAND_ERROR_IS_FATAL ANY)
foreach(entry IN LISTS HEAPSCOPE_DEB_PACKAGES)
  string(REPLACE ":" ";" entry "${entry}")
  list(GET entry 0 component)
  list(GET entry 1 package)
  install(FILES ${HEAPSCOPE_PACKAGE_DOC_DIR}/copyright ${HEAPSCOPE_PACKAGE_DOC_DIR}/changelog.gz
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component} EXCLUDE_FROM_ALL)
  set(overrides ${CMAKE_CURRENT_LIST_DIR}/lintian/${package})
  if(EXISTS ${overrides})
    install(FILES ${overrides} DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
      COMPONENT ${component} EXCLUDE_FROM_ALL)
  endif()
  string(TOUPPER ${component} upper)
  set(CPACK_DEBIAN_${upper}_PACKAGE_NAME ${package})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME heapscope)
set(CPACK_PACKAGE_VENDOR "${copyright_holder}")
set(CPACK_PACKAGE_VERSION ${HEAPSCOPE_DEB_VERSION})
set(CPACK_PACKAGE_CONTACT "${HEAPSCOPE_PACKAGE_CONTACT}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# DESTDIR staging with the real prefix, so files written at install time (the .pc files) say /usr.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# dpkg-shlibdeps turns each binary's NEEDED entries into versioned Depends.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# shlibs control file: packages built against libheapscope0 depend on exactly this version
# (0.x makes no ABI promise between releases).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/debian/libheapscope0/triggers)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "heapscope allocator with a sampled heap profiler (shared libraries)
heapscope is a thread-safe malloc/new replacement with a built-in sampled heap
profiler whose profiles go tool pprof reads. This package holds the shared
libraries: libheapscope.so.0 (replaces malloc/new when preloaded or linked),
libheapscope_noprof.so.0 (the same without the profiler) and
libheapscope_api.so.0 (only the hs_* functions).")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libheapscope0 (= ${HEAPSCOPE_DEB_VERSION})")
set(CPACK_COMPONENT_DEV_DESCRIPTION "heapscope allocator with a sampled heap profiler (development files)
heapscope is a thread-safe malloc/new replacement with a built-in sampled heap
profiler whose profiles go tool pprof reads. This package holds the C headers,
the static library, the CMake package (find_package(heapscope)) and the
pkg-config files heapscope, heapscope-static, heapscope-api, heapscope-events
and heapscope-events-api.")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libheapscope0 (= ${HEAPSCOPE_DEB_VERSION})")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "heapscope allocator benchmark tools
hsbench runs seeded workloads and real programs under heapscope and the other
installed allocators (glibc, mimalloc, jemalloc, tcmalloc) and reports paired
statistics; hs-probe reports which shared object serves malloc in a process.")

include(CPack)

add_test(NAME packaging.deb COMMAND ${CMAKE_COMMAND}
  -DHS_BUILD_DIR=${PROJECT_BINARY_DIR} -DHS_WORK_DIR=${PROJECT_BINARY_DIR}/packaging-test
  -DHS_VERSION=${HEAPSCOPE_DEB_VERSION} -DHS_LIBDIR=${CMAKE_INSTALL_LIBDIR}
  -P ${CMAKE_CURRENT_LIST_DIR}/tests/check_debs.cmake)
set_tests_properties(packaging.deb PROPERTIES LABELS "packaging" TIMEOUT 600
  FIXTURES_SETUP heapscope_debs)
# `apt install ./*.deb` in a fresh debootstrapped Debian 12 root, use, purge (needs root and the
# Debian mirror, a few minutes: label slow, not in the default run).
add_test(NAME packaging.debs_in_chroot COMMAND bash
  ${PROJECT_SOURCE_DIR}/ci/check-debs-in-chroot.sh ${PROJECT_BINARY_DIR}/packaging-test)
set_tests_properties(packaging.debs_in_chroot PROPERTIES LABELS "slow;packaging" TIMEOUT 1200
  FIXTURES_REQUIRED heapscope_debs)
