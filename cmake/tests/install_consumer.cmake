# ctest install.consumer: installs the build tree into a fresh prefix, checks that nothing
# installed points back into the build or source tree, then builds a consumer outside the tree
# with find_package and with pkg-config, runs it (its malloc must be heapscope's, checked from
# inside) and runs the installed hs-probe under LD_PRELOAD of the installed library.
# Inputs: HS_BUILD_DIR HS_SOURCE_DIR HS_LIBDIR HS_GENERATOR HS_CXX HS_PKG_CONFIG
# Works in a fresh directory under $TMPDIR (or /tmp), removed when every check passed.
cmake_minimum_required(VERSION 3.25)

function(run)
  cmake_parse_arguments(R "" "EXPECT;OUTPUT" "COMMAND" ${ARGN})
  if(NOT DEFINED R_EXPECT)
    set(R_EXPECT 0)
  endif()
  execute_process(COMMAND ${R_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE ";" " " shown "${R_COMMAND}")
  if(NOT rc STREQUAL R_EXPECT)
    message(FATAL_ERROR "'${shown}' exited ${rc}, expected ${R_EXPECT}\n${out}\n${err}")
  endif()
  message(STATUS "ok (exit ${rc}): ${shown}\n${out}")
  if(R_OUTPUT)
    set(${R_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

set(tmp "$ENV{TMPDIR}")
if(NOT tmp)
  set(tmp /tmp)
endif()
string(RANDOM LENGTH 10 suffix)
set(HS_WORK_DIR ${tmp}/heapscope-install-${suffix})
set(prefix ${HS_WORK_DIR}/prefix)
set(libdir ${prefix}/${HS_LIBDIR})
file(MAKE_DIRECTORY ${HS_WORK_DIR})
message(STATUS "working in ${HS_WORK_DIR}")

run(COMMAND ${CMAKE_COMMAND} --install ${HS_BUILD_DIR} --prefix ${prefix})

# The layout a consumer relies on.
foreach(f include/heapscope/heapscope.h include/heapscope/profile.h
          ${HS_LIBDIR}/libheapscope.so.0 ${HS_LIBDIR}/libheapscope_api.so.0
          ${HS_LIBDIR}/libheapscope_noprof.so.0 ${HS_LIBDIR}/libheapscope_static.a
          ${HS_LIBDIR}/libheapscope_events.so.0 ${HS_LIBDIR}/libheapscope_events_api.so.0
          ${HS_LIBDIR}/libheapscope_hardened.so.0
          include/heapscope/memory_events.h
          ${HS_LIBDIR}/cmake/heapscope/heapscopeConfig.cmake
          ${HS_LIBDIR}/pkgconfig/heapscope.pc bin/hsbench bin/hs-workload bin/hs-probe
          libexec/heapscope/libhs_app_probe_shim.so)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
run(COMMAND readelf -d ${libdir}/libheapscope.so.0 OUTPUT dynamic)
if(NOT dynamic MATCHES "Library soname: \\[libheapscope\\.so\\.0\\]")
  message(FATAL_ERROR "libheapscope.so.0 has no soname libheapscope.so.0:\n${dynamic}")
endif()

# No installed text file may name the build or source tree (the exported targets' include
# directories and link interface in particular).
file(GLOB_RECURSE text_files ${prefix}/*.cmake ${prefix}/*.pc ${prefix}/*.h)
foreach(f IN LISTS text_files)
  file(READ ${f} content)
  foreach(tree ${HS_BUILD_DIR} ${HS_SOURCE_DIR})
    string(FIND "${content}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${f} names ${tree}")
    endif()
  endforeach()
endforeach()

# find_package: one executable per imported target, from a copy of the project outside the tree.
file(COPY ${CMAKE_CURRENT_LIST_DIR}/consumer DESTINATION ${HS_WORK_DIR})
set(consumer_src ${HS_WORK_DIR}/consumer)
run(COMMAND ${CMAKE_COMMAND} -S ${consumer_src} -B ${HS_WORK_DIR}/cmake-build -G ${HS_GENERATOR}
            -DCMAKE_CXX_COMPILER=${HS_CXX} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run(COMMAND ${CMAKE_COMMAND} --build ${HS_WORK_DIR}/cmake-build)
foreach(pair heapscope:shared static:static noprof:noprof api:api events:events
        events_api:events-api)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 target)
  list(GET pair 1 mode)
  run(COMMAND ${HS_WORK_DIR}/cmake-build/consumer_${target} ${mode})
endforeach()

# pkg-config: the compiler driven by hand, as a Makefile would.
set(pc_env ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${libdir}/pkgconfig)
foreach(pair heapscope:shared heapscope-static:static heapscope-api:api heapscope-events:events
        heapscope-events-api:events-api)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 module)
  list(GET pair 1 mode)
  run(COMMAND ${pc_env} ${HS_PKG_CONFIG} --cflags --libs ${module} OUTPUT flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(exe ${HS_WORK_DIR}/pc_${mode})
  run(COMMAND ${HS_CXX} -std=c++17 -O2 ${consumer_src}/consumer.cc -o ${exe} ${flags} -ldl)
  run(COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} ${exe} ${mode})
endforeach()

# LD_PRELOAD: the installed probe names the installed library as malloc's server, and the same
# check fails (exit 3) without the preload.
run(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${libdir}/libheapscope.so.0
            ${prefix}/bin/hs-probe --expect ${libdir}/libheapscope.so.0)
run(COMMAND ${prefix}/bin/hs-probe --expect ${libdir}/libheapscope.so.0 EXPECT 3)
# The installed hsbench, with no HEAPSCOPE_* variable, measures the installed engines and uses
# the installed app shim, not the build tree's.
set(no_overrides ${CMAKE_COMMAND} -E env --unset=HEAPSCOPE_ENGINE_LIB
    --unset=HEAPSCOPE_ENGINE_NOPROF_LIB --unset=HEAPSCOPE_APP_PROBE_SHIM)
run(COMMAND ${no_overrides} ${prefix}/bin/hsbench allocators --json --only engine,engine-noprof
    OUTPUT registry)
foreach(i 0 1)
  string(JSON path GET "${registry}" allocators ${i} resolved_path)
  string(JSON available GET "${registry}" allocators ${i} available)
  cmake_path(IS_PREFIX libdir "${path}" NORMALIZE inside)
  if(NOT inside OR NOT available)
    message(FATAL_ERROR "installed hsbench uses ${path} (available: ${available}), not ${libdir}")
  endif()
endforeach()
run(COMMAND ${no_overrides} ${prefix}/bin/hsbench --version OUTPUT version)
if(NOT version MATCHES "engine ${libdir}/libheapscope\\.so\\.0[^:]*: heapscope ")
  message(FATAL_ERROR "hsbench --version does not name the installed engine:\n${version}")
endif()
file(REMOVE_RECURSE ${HS_WORK_DIR})
message(STATUS "install.consumer: all checks passed")
