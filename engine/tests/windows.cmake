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
  SOURCES internal/slice_map_test.cc internal/invariant_check_test.cc internal/exp_log_test.cc)
target_include_directories(hs_internal_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/../src)
target_compile_definitions(hs_internal_tests PRIVATE HS_TEST_ENGINE_DEBUG=0)

hs_engine_test(hs_degenerate_tests LIBRARY heapscope_api TIMEOUT 180 LABELS "stress"
  SOURCES stress/degenerate_test.cc)
hs_engine_test(hs_thread_rounds_tests LIBRARY heapscope_api TIMEOUT 180 LABELS "stress"
  SOURCES stress/thread_rounds_test.cc)

# Threads by the thousand, created by std::thread (winpthreads), not by the engine: the FLS
# exit callback must return each one's heap. The control runs it without the hook and must fail.
hs_engine_test(hs_thread_exit_tests LIBRARY heapscope_api TIMEOUT 180 LABELS "stress"
  SOURCES stress/thread_exit_test.cc)
add_test(NAME engine.thread_exit.fails_without_hook COMMAND hs_thread_exit_tests)
set_tests_properties(engine.thread_exit.fails_without_hook PROPERTIES LABELS "stress"
  ENVIRONMENT "HEAPSCOPE_TEST_NO_THREAD_EXIT_HOOK=1" TIMEOUT 180
  PASS_REGULAR_EXPRESSION "exited threads( still count|' heaps remain)")

# Thread churn and cross-thread frees (the fork test is Linux-only).
hs_engine_test(hs_concurrency_tests LIBRARY heapscope_api TIMEOUT 180 LABELS "stress"
  SOURCES stress/concurrency_test.cc)

# Memory events compiled in (the library with them compiled out is the default one above).
hs_engine_test(hs_events_on_tests LIBRARY heapscope_events_api TIMEOUT 180 LABELS "unit;events"
  SOURCES events/semantics_test.cc events/exactness_test.cc)
target_compile_definitions(hs_events_on_tests PRIVATE HS_TEST_EVENTS=1)

