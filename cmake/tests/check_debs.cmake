# ctest packaging.deb: builds the Debian packages with CPack and checks each one's control
# fields (names, dependencies), file list and extracted contents, then runs lintian.
# Inputs: HS_BUILD_DIR HS_WORK_DIR HS_VERSION HS_LIBDIR
cmake_minimum_required(VERSION 3.25)

function(run out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE ";" " " shown "${ARGN}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "'${shown}' exited ${rc}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}${err}" PARENT_SCOPE)
endfunction()

function(require text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: no match for '${regex}' in\n${text}")
  endif()
endfunction()

function(forbid text regex what)
  if(text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: unexpected '${regex}' in\n${text}")
  endif()
endfunction()

file(REMOVE_RECURSE ${HS_WORK_DIR})
file(MAKE_DIRECTORY ${HS_WORK_DIR})
run(cpack_out ${CMAKE_CPACK_COMMAND} -G DEB --config ${HS_BUILD_DIR}/CPackConfig.cmake
    -B ${HS_WORK_DIR})
message(STATUS "${cpack_out}")

set(lib usr/${HS_LIBDIR})
# package | control fields that must match | files that must be in it | files that must not
set(runtime_fields "Package: libheapscope0\n" "Section: libs\n" "Depends: [^\n]*libc6 \\(>= ")
set(runtime_files "./${lib}/libheapscope.so.0.1.0" "./${lib}/libheapscope.so.0 -> "
    "./${lib}/libheapscope_api.so.0 -> " "./${lib}/libheapscope_noprof.so.0 -> "
    "./${lib}/libheapscope_events.so.0 -> " "./${lib}/libheapscope_hardened.so.0 -> "
    "./usr/share/doc/libheapscope0/copyright" "./usr/share/doc/libheapscope0/changelog.gz")
# The engine libraries need only libc (engine.deps_libc_only), so shlibdeps adds nothing else.
set(runtime_fields_absent "Depends: [^\n]*(libstdc\\+\\+|zlib1g|libgcc)")
set(runtime_absent "\\.so -> " "\\.h\n" "usr/bin/" "\\.a\n")
set(dev_fields "Package: libheapscope-dev\n" "Section: libdevel\n"
    "Depends: [^\n]*libheapscope0 \\(= ${HS_VERSION}\\)")
set(dev_files "./usr/include/heapscope/heapscope.h" "./usr/include/heapscope/profile.h"
    "./${lib}/libheapscope_static.a" "./${lib}/libheapscope.so -> libheapscope.so.0"
    "./${lib}/cmake/heapscope/heapscopeConfig.cmake"
    "./${lib}/cmake/heapscope/heapscopeTargets.cmake" "./${lib}/pkgconfig/heapscope.pc"
    "./${lib}/pkgconfig/heapscope-static.pc" "./${lib}/pkgconfig/heapscope-events.pc"
    "./${lib}/pkgconfig/heapscope-events-api.pc")
set(dev_absent " \\./[^ \n]*\\.so\\.0[ .\n]" "usr/bin/")
set(tools_fields "Package: heapscope-tools\n" "Depends: [^\n]*libheapscope0 \\(= ${HS_VERSION}\\)"
    "Depends: [^\n]*libstdc\\+\\+6")
set(tools_files "./usr/share/man/man1/hsbench.1.gz" "./usr/bin/hsbench" "./usr/bin/hs-workload" "./usr/bin/hs-probe"
    "./usr/libexec/heapscope/libhs_app_probe_shim.so" "./usr/libexec/heapscope/hs-launch")
set(tools_absent "\\.h\n" "libheapscope\\.so")

set(debs "")
foreach(component runtime dev tools)
  list(GET ${component}_fields 0 first)
  string(REGEX REPLACE "Package: ([^\n]*)\n" "\\1" package "${first}")
  file(GLOB deb ${HS_WORK_DIR}/${package}_${HS_VERSION}_*.deb)
  if(NOT deb)
    message(FATAL_ERROR "no ${package}_${HS_VERSION}_*.deb in ${HS_WORK_DIR}")
  endif()
  list(APPEND debs ${deb})
  set(deb_${component} ${deb})
  run(info dpkg-deb --info ${deb})
  run(contents dpkg-deb --contents ${deb})
  message(STATUS "${package}:\n${info}\n${contents}")
  foreach(regex IN LISTS ${component}_fields)
    require("${info}" "${regex}" "${package} control")
  endforeach()
  foreach(file IN LISTS ${component}_files)
    string(REGEX REPLACE "([.+*?^$()[\\]])" "\\\\\\1" regex "${file}")
    require("${contents}" " ${regex}" "${package} files")
  endforeach()
  foreach(regex IN LISTS ${component}_fields_absent)
    forbid("${info}" "${regex}" "${package} control")
  endforeach()
  foreach(regex IN LISTS ${component}_absent)
    forbid("${contents}" "${regex}" "${package} files")
  endforeach()
  # Everything root-owned and nothing from the build machine's paths.
  forbid("${contents}" "\n[-dlrwx]+ [^r][^/]*/" "${package} ownership")
  set(root ${HS_WORK_DIR}/extract/${package})
  file(MAKE_DIRECTORY ${root})
  run(_ dpkg-deb -x ${deb} ${root})
endforeach()

# The extracted files: the library's soname, the runtime package's shlibs and ldconfig trigger,
# and the development files point at /usr, not at the build's staging directory.
set(root ${HS_WORK_DIR}/extract)
run(dynamic readelf -d ${root}/libheapscope0/${lib}/libheapscope.so.0)
require("${dynamic}" "Library soname: \\[libheapscope\\.so\\.0\\]" "soname")
forbid("${dynamic}" "RPATH|RUNPATH" "libheapscope.so.0")
run(shlibs dpkg-deb -I ${deb_runtime} shlibs)
require("${shlibs}" "libheapscope 0 libheapscope0 \\(= ${HS_VERSION}\\)" "shlibs")
run(triggers dpkg-deb -I ${deb_runtime} triggers)
require("${triggers}" "activate-noawait ldconfig" "triggers")
file(READ ${root}/libheapscope-dev/${lib}/pkgconfig/heapscope.pc pc)
require("${pc}" "prefix=/usr\n" "heapscope.pc")
file(GLOB_RECURSE dev_cmake ${root}/libheapscope-dev/*.cmake)
foreach(f IN LISTS dev_cmake)
  file(READ ${f} text)
  forbid("${text}" "${HS_BUILD_DIR}|_CPack_Packages" "${f}")
endforeach()
run(probe_help ${root}/heapscope-tools/usr/bin/hs-probe --help)

# lintian: no error or warning may remain (each override carries its reason).
find_program(LINTIAN lintian REQUIRED)
execute_process(COMMAND ${LINTIAN} --no-tag-display-limit --display-info --fail-on error,warning
                        ${debs}
                RESULT_VARIABLE rc OUTPUT_VARIABLE lint ERROR_VARIABLE lint_err)
message(STATUS "lintian (exit ${rc}):\n${lint}${lint_err}")
if(NOT rc EQUAL 0 OR lint MATCHES "(^|\n)[EW]: ")
  message(FATAL_ERROR "lintian reports errors or warnings")
endif()
message(STATUS "packaging.deb: all checks passed")
