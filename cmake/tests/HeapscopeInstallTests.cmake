# ctest registrations of the install and packaging checks (they need the whole project built).
find_program(HEAPSCOPE_PKG_CONFIG pkg-config)
add_test(NAME install.consumer COMMAND ${CMAKE_COMMAND}
  -DHS_BUILD_DIR=${PROJECT_BINARY_DIR} -DHS_SOURCE_DIR=${PROJECT_SOURCE_DIR}
  -DHS_LIBDIR=${CMAKE_INSTALL_LIBDIR}
  -DHS_GENERATOR=${CMAKE_GENERATOR} -DHS_CXX=${CMAKE_CXX_COMPILER}
  -DHS_PKG_CONFIG=${HEAPSCOPE_PKG_CONFIG} -P ${CMAKE_CURRENT_LIST_DIR}/install_consumer.cmake)
set_tests_properties(install.consumer PROPERTIES LABELS "integration;install" TIMEOUT 600)
