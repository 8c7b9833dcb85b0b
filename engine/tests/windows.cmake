# The engine's tests on Windows (MinGW-w64, run under Wine by ci/cross-test.sh windows), included
# by CMakeLists.txt instead of the Linux list. Suites that need what Windows does not have are
# left out (fork, /proc, LD_PRELOAD, ELF, mmap placement); engine/docs/platforms.md lists them and
# why. Every executable links the engine's DLLs, built into the same folder.
hs_engine_test(hs_api_tests LIBRARY heapscope_api TIMEOUT 120 LABELS "unit;api"
  SOURCES api/basic_test.cc api/aligned_test.cc api/zeroing_test.cc api/heap_test.cc
          api/grow_in_place_test.cc api/page_keep_test.cc api/stats_options_test.cc)
# Options from HEAPSCOPE_* variables at start-up (on Linux the suite spawns this child itself).
add_test(NAME engine.api.options_from_environment
  COMMAND hs_api_tests --gtest_filter=OptionsChild.ReportsEnvironment)
set_tests_properties(engine.api.options_from_environment PROPERTIES LABELS "unit;api" TIMEOUT 60
  ENVIRONMENT "HS_TEST_OPTIONS_CHILD=1;HEAPSCOPE_VERBOSE=1;HEAPSCOPE_SHOW_STATS=1;HEAPSCOPE_PURGE_DELAY=1234;HEAPSCOPE_HUGE_CACHE_BYTES=7340032;HEAPSCOPE_CHECK_FREES=1"
  PASS_REGULAR_EXPRESSION "PASSED  \\] 1 test.*heapscope stats|heapscope stats.*PASSED  \\] 1 test")

hs_engine_test(hs_internal_tests LIBRARY heapscope_api TIMEOUT 60 LABELS "unit"
  SOURCES internal/slice_map_test.cc internal/invariant_check_test.cc internal/exp_log_test.cc
          internal/segment_map_range_test.cc)
target_include_directories(hs_internal_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/../src)
target_compile_definitions(hs_internal_tests PRIVATE HS_TEST_ENGINE_DEBUG=0)

hs_engine_test(hs_degenerate_tests LIBRARY heapscope_api TIMEOUT 180 LABELS "stress"
  SOURCES stress/degenerate_test.cc)
hs_engine_test(hs_thread_rounds_tests LIBRARY heapscope_api TIMEOUT 180 LABELS "stress"
  SOURCES stress/thread_rounds_test.cc)

# Threads by the thousand, created by std::thread (winpthreads), not by the engine: the FLS
# exit callback must return each one's heap. The control runs it without the hook and must fail.
hs_engine_test(hs_thread_exit_tests LIBRARY heapscope_api TIMEOUT 300 LABELS "stress"
  SOURCES stress/thread_exit_test.cc)
add_test(NAME engine.thread_exit.hook_disabled_fails COMMAND hs_thread_exit_tests
  --gtest_filter=ThreadExit.ThousandsOfThreadsReturnTheirMemory)
set_tests_properties(engine.thread_exit.hook_disabled_fails PROPERTIES LABELS "stress"
  TIMEOUT 300 ENVIRONMENT "HEAPSCOPE_TEST_NO_THREAD_EXIT_HOOK=1"
  PASS_REGULAR_EXPRESSION "exited threads kept their memory")

# Thread churn and cross-thread frees (the fork test is Linux-only).
hs_engine_test(hs_concurrency_tests LIBRARY heapscope_api TIMEOUT 180 LABELS "stress"
  SOURCES stress/concurrency_test.cc)
# An idle owner's full pages taken over by the threads freeing into them (the fork test is
# Linux-only).
hs_engine_test(hs_takeover_tests LIBRARY heapscope_api TIMEOUT 180 LABELS "stress"
  SOURCES stress/takeover_test.cc)

# Memory events compiled in (the library with them compiled out is the default one above).
hs_engine_test(hs_events_on_tests LIBRARY heapscope_events_api TIMEOUT 180 LABELS "unit;events"
  SOURCES events/semantics_test.cc events/exactness_test.cc)
target_compile_definitions(hs_events_on_tests PRIVATE HS_TEST_EVENTS=1)


# The profiler on Windows: the dump under Wine, then the symbolized profile read back on the
# host by go tool pprof (windows_pprof_check.sh), in that order (a CTest fixture).
set(HS_WINDOWS_PROFILE_DIR ${CMAKE_CURRENT_BINARY_DIR}/windows_profiles)
file(MAKE_DIRECTORY ${HS_WINDOWS_PROFILE_DIR})
add_executable(hs_windows_profile_tests profiler/windows_dump_test.cc profiler/alloc_chain.cc)
target_link_libraries(hs_windows_profile_tests PRIVATE heapscope_api GTest::gtest
  GTest::gtest_main heapscope_warnings)
target_compile_options(hs_windows_profile_tests PRIVATE -g -fno-omit-frame-pointer)
target_compile_definitions(hs_windows_profile_tests PRIVATE
  HS_PROFILE_DIR="${HS_WINDOWS_PROFILE_DIR}")
set_source_files_properties(profiler/windows_dump_test.cc PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
add_test(NAME engine.windows.profile_dump COMMAND hs_windows_profile_tests)
add_test(NAME engine.windows.profile_read_by_pprof
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/profiler/windows_pprof_check.sh
          ${HS_WINDOWS_PROFILE_DIR}/windows.sym.pb.gz)
# Positive control: the profile without function names (go cannot open the Windows paths of its
# mappings to symbolize them itself) must fail the same check.
add_test(NAME engine.windows.profile_check_fires
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/profiler/windows_pprof_check.sh
          ${HS_WINDOWS_PROFILE_DIR}/windows.raw.pb.gz)
set_tests_properties(engine.windows.profile_check_fires PROPERTIES LABELS "integration;profiler"
  TIMEOUT 120 FIXTURES_REQUIRED windows_profile PASS_REGULAR_EXPRESSION "level_two is not named")
set_tests_properties(engine.windows.profile_dump PROPERTIES LABELS "integration;profiler"
  TIMEOUT 120 FIXTURES_SETUP windows_profile)
set_tests_properties(engine.windows.profile_read_by_pprof PROPERTIES
  LABELS "integration;profiler" TIMEOUT 120 FIXTURES_REQUIRED windows_profile SKIP_RETURN_CODE 77)

# Overriding malloc/free/new by linking the static library (override/windows_static_test.cc);
# the same source linked with the hs_* DLL only is the positive control and must fail.
hs_engine_test(hs_windows_override_tests LIBRARY heapscope_static TIMEOUT 120 LABELS "unit;override"
  SOURCES override/windows_static_test.cc)
target_compile_options(hs_windows_override_tests PRIVATE -fno-builtin)
add_executable(hs_windows_no_override_tests override/windows_static_test.cc)
target_link_libraries(hs_windows_no_override_tests PRIVATE heapscope_api GTest::gtest
  GTest::gtest_main heapscope_warnings)
target_compile_options(hs_windows_no_override_tests PRIVATE -fno-builtin)
target_include_directories(hs_windows_no_override_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/../include)
add_test(NAME engine.windows.override_control_fails
  COMMAND hs_windows_no_override_tests --gtest_filter=WindowsOverride.MallocFree*)
set_tests_properties(engine.windows.override_control_fails PROPERTIES LABELS "unit;override"
  TIMEOUT 60 PASS_REGULAR_EXPRESSION "malloc is not the engine's")
