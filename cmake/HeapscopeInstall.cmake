# Installs the engine like any system allocator: headers, the engine libraries with
# sonames, the tools, a CMake package (find_package(heapscope CONFIG)) and pkg-config files.
# Components: runtime (shared libraries), dev (headers, static library, namelinks, package
# files), tools (hsbench and its helpers). The Debian packages map one to one onto them.
include(${CMAKE_CURRENT_LIST_DIR}/HeapscopeInstallDirs.cmake)
include(CMakePackageConfigHelpers)

set(HEAPSCOPE_SHARED_TARGETS heapscope heapscope_api heapscope_noprof heapscope_events
                             heapscope_events_api heapscope_hardened)
set(HEAPSCOPE_ENGINE_TARGETS ${HEAPSCOPE_SHARED_TARGETS} heapscope_static)
set(HEAPSCOPE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/heapscope)

# Sonames: libheapscope.so.0 -> libheapscope.so.0.1.0. The ABI is the C API of the headers.
set_target_properties(${HEAPSCOPE_SHARED_TARGETS} PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})

# The exported names consumers see (heapscope::static, not heapscope::heapscope_static).
set_target_properties(heapscope PROPERTIES EXPORT_NAME heapscope)
set_target_properties(heapscope_static PROPERTIES EXPORT_NAME static)
set_target_properties(heapscope_api PROPERTIES EXPORT_NAME api)
set_target_properties(heapscope_noprof PROPERTIES EXPORT_NAME noprof)
set_target_properties(heapscope_events PROPERTIES EXPORT_NAME events)
set_target_properties(heapscope_events_api PROPERTIES EXPORT_NAME events_api)
set_target_properties(heapscope_hardened PROPERTIES EXPORT_NAME hardened)

# Usage requirements as the engine sets them name directories of this source tree; an exported
# target may only carry them for the build tree, and the install prefix's include/ otherwise.
# Build-only link dependencies (interface libraries carrying warning flags, object libraries
# already inside the archive) are dropped from the archive's link interface for the same reason.
foreach(target IN LISTS HEAPSCOPE_ENGINE_TARGETS)
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set(wrapped "")
  foreach(dir IN LISTS dirs)
    if(dir AND NOT dir MATCHES "^\\$<")
      list(APPEND wrapped "$<BUILD_INTERFACE:${dir}>")
    elseif(dir)
      list(APPEND wrapped "${dir}")
    endif()
  endforeach()
  list(APPEND wrapped "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${wrapped}")

  get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
  if(links)
    set(kept "")
    foreach(link IN LISTS links)
      if(link MATCHES "^\\$<LINK_ONLY:([^>]+)>$")
        set(dep "${CMAKE_MATCH_1}")
        if(TARGET ${dep})
          get_target_property(dep_imported ${dep} IMPORTED)
          if(NOT dep_imported)
            continue()
          endif()
        endif()
      endif()
      list(APPEND kept "${link}")
    endforeach()
    set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES "${kept}")
  endif()
endforeach()

install(TARGETS ${HEAPSCOPE_SHARED_TARGETS} EXPORT heapscopeTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(TARGETS heapscope_static EXPORT heapscopeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/include/heapscope
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev FILES_MATCHING PATTERN "*.h")

install(EXPORT heapscopeTargets NAMESPACE heapscope:: DESTINATION ${HEAPSCOPE_CMAKE_DIR}
  COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/heapscopeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/heapscopeConfig.cmake INSTALL_DESTINATION ${HEAPSCOPE_CMAKE_DIR})
# 0.x: a minor release may change the ABI, so only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/heapscopeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/heapscopeConfig.cmake
  ${PROJECT_BINARY_DIR}/heapscopeConfigVersion.cmake
  DESTINATION ${HEAPSCOPE_CMAKE_DIR} COMPONENT dev)

# pkg-config files are written at install time so `cmake --install --prefix P` (and CPack's
# staging) put P, not the configure-time prefix, into them; written straight to the
# destination so concurrent installs to different prefixes share no intermediate file.
foreach(pc heapscope heapscope-static heapscope-api heapscope-events heapscope-events-api)
  install(CODE "
    set(HS_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    set(HS_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
    set(HS_PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
    set(HS_PC_VERSION \"${PROJECT_VERSION}\")
    set(hs_pc_file \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/${pc}.pc\")
    message(STATUS \"Installing: \${hs_pc_file}\")
    configure_file(\"${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in\" \"\${hs_pc_file}\" @ONLY)
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${hs_pc_file}\")
    " COMPONENT dev)
endforeach()

# Tools: the benchmark command, its workload child (found next to hsbench), the ownership probe,
# the `hsbench app` tracing shim (a private library, not for linking) and the launcher each
# `hsbench app` command is started through (a private program).
install(TARGETS hsbench hs-workload hs-probe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  COMPONENT tools)
install(TARGETS hs_app_probe_shim LIBRARY DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/heapscope
  COMPONENT tools NAMELINK_SKIP)
install(TARGETS hs-launch RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/heapscope
  COMPONENT tools)
# The built-in suites of `hsbench suite` (suite files and their input generators).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/harness/suites/ DESTINATION
  ${CMAKE_INSTALL_DATADIR}/heapscope/suites COMPONENT tools)

# Man pages generated from the tools' --help at build time (help2man); hsbench's page holds
# every subcommand's help (--help-all). gzip -9n: reproducible, as Debian requires.
find_program(HEAPSCOPE_HELP2MAN help2man)
if(HEAPSCOPE_HELP2MAN)
  set(hs_man_dir ${PROJECT_BINARY_DIR}/man)
  add_custom_command(OUTPUT ${hs_man_dir}/hsbench.1.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${hs_man_dir}
    COMMAND ${HEAPSCOPE_HELP2MAN} --no-info --help-option=--help-all
            --version-string=${PROJECT_VERSION} --section=1
            "--name=benchmark campaigns for heapscope and its peer allocators"
            --output=${hs_man_dir}/hsbench.1 $<TARGET_FILE:hsbench>
    COMMAND gzip -9 -n -f ${hs_man_dir}/hsbench.1
    DEPENDS hsbench VERBATIM)
  add_custom_target(heapscope_man ALL DEPENDS ${hs_man_dir}/hsbench.1.gz)
  install(FILES ${hs_man_dir}/hsbench.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
    COMPONENT tools)
endif()
