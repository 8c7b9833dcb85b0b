# ctest runs of the Rust crate in rust/ with Debian's cargo and rustc (a rustup toolchain
# earlier on PATH is not what users of the Debian packages build with). The crate's build
# script compiles the engine itself; its target directory lives in this build tree.
find_program(HEAPSCOPE_CARGO cargo PATHS /usr/bin NO_DEFAULT_PATH)
find_program(HEAPSCOPE_CARGO cargo)
get_filename_component(cargo_dir "${HEAPSCOPE_CARGO}" DIRECTORY)
find_program(HEAPSCOPE_RUSTC rustc PATHS "${cargo_dir}" NO_DEFAULT_PATH)
find_program(HEAPSCOPE_RUSTDOC rustdoc PATHS "${cargo_dir}" NO_DEFAULT_PATH)
find_program(HEAPSCOPE_GO go)

set(HEAPSCOPE_RUST_ARGS -DHS_CARGO=${HEAPSCOPE_CARGO} -DHS_RUSTC=${HEAPSCOPE_RUSTC}
    -DHS_RUSTDOC=${HEAPSCOPE_RUSTDOC}    -DHS_GO=${HEAPSCOPE_GO} -DHS_CRATE_DIR=${PROJECT_SOURCE_DIR}/rust
    -DHS_TARGET_DIR=${PROJECT_BINARY_DIR}/rust-target -DHS_WORK_DIR=${PROJECT_BINARY_DIR}/rust-test)
add_test(NAME rust.cargo_test COMMAND ${CMAKE_COMMAND} ${HEAPSCOPE_RUST_ARGS} -DHS_STEP=test
  -P ${CMAKE_CURRENT_LIST_DIR}/tests/rust_crate.cmake)
add_test(NAME rust.cargo_test_events COMMAND ${CMAKE_COMMAND} ${HEAPSCOPE_RUST_ARGS}
  -DHS_STEP=test_events -P ${CMAKE_CURRENT_LIST_DIR}/tests/rust_crate.cmake)
add_test(NAME rust.profile_self COMMAND ${CMAKE_COMMAND} ${HEAPSCOPE_RUST_ARGS} -DHS_STEP=example
  -P ${CMAKE_CURRENT_LIST_DIR}/tests/rust_crate.cmake)
# One cargo target directory: the example reuses the engine the first run compiled (the
# events variant compiles its own).
set_tests_properties(rust.cargo_test rust.cargo_test_events rust.profile_self PROPERTIES
  LABELS rust TIMEOUT 900 RESOURCE_LOCK heapscope_cargo_target)
set_tests_properties(rust.profile_self PROPERTIES DEPENDS rust.cargo_test)
