# SPDX-License-Identifier: GPL-2.0-only
# schedlab_add_library(NAME SOURCES ... DEPENDS ...): one static library per layer.
function(schedlab_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_library(schedlab_${name} STATIC ${ARG_SOURCES})
  target_include_directories(schedlab_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(schedlab_${name} PUBLIC ${ARG_DEPENDS})
  # Fat LTO objects when SCHEDLAB_LTO is on (CMakeLists.txt): schedlab_lto_program's programs
  # optimise across the libraries at link time, the others link their machine code.
  target_compile_options(schedlab_${name} PRIVATE ${SCHEDLAB_LTO_COMPILE_OPTIONS})
  if(name IN_LIST SCHEDLAB_COLD_LIBRARIES)
    target_compile_options(schedlab_${name} PRIVATE ${SCHEDLAB_COLD_LIBRARY_FLAGS})
  elseif(SCHEDLAB_LIBRARY_FLAGS)
    target_compile_options(schedlab_${name} PRIVATE ${SCHEDLAB_LIBRARY_FLAGS})
  endif()
  if(SCHEDLAB_PCH) # the libraries' precompiled header (CMakeLists.txt), made with their options
    if(name IN_LIST SCHEDLAB_COLD_LIBRARIES)
      target_precompile_headers(schedlab_${name} REUSE_FROM schedlab_cold_pch)
    else()
      target_precompile_headers(schedlab_${name} REUSE_FROM schedlab_lib_pch)
    endif()
  endif()
  if(SCHEDLAB_UNITY_LIBRARIES)
    set_target_properties(schedlab_${name} PROPERTIES
      UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${SCHEDLAB_UNITY_BATCH})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # A .cc file included by a unity file is a header to GCC, which then warns of every
      # coroutine frame holding a local type (workload/: "has a field whose type has no
      # linkage"); the frames are local to their file's function either way.
      target_compile_options(schedlab_${name} PRIVATE -Wno-subobject-linkage)
    endif()
  endif()
  if(SCHEDLAB_FUZZ)
    # libFuzzer's coverage counters and comparison hooks; programs linked without
    # -fsanitize=fuzzer (the test programs) get the sanitizer runtime's no-op hooks.
    target_compile_options(schedlab_${name} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

# schedlab_add_tests(NAME SOURCES ... DEPENDS ... [COST N] [LTO]): one GoogleTest binary per
# layer, each TEST registered with CTest. Unit tests sit next to the code they test. COST: ctest's
# COST property of each of its tests; ctest starts the costliest first when it has no
# timings of an earlier run (a clean clone in CI), so a long test is not left to the end. LTO:
# linked with link-time optimisation when SCHEDLAB_LTO is on, as the CLI is (the others link
# the libraries' machine code).
function(schedlab_add_tests name)
  if(NOT SCHEDLAB_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "LTO" "COST" "SOURCES;DEPENDS" ${ARGN})
  set(cost)
  if(ARG_COST)
    set(cost COST ${ARG_COST})
  endif()
  add_executable(${name}_test ${ARG_SOURCES})
  target_link_libraries(${name}_test PRIVATE ${ARG_DEPENDS} GTest::gtest GTest::gtest_main GTest::gmock)
  if(ARG_LTO) # linked with link-time optimisation when SCHEDLAB_LTO is on (CMakeLists.txt)
    schedlab_lto_program(${name}_test)
  else()
    schedlab_no_lto_program(${name}_test)
  endif()
  target_compile_definitions(${name}_test PRIVATE
    SCHEDLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SCHEDLAB_REFERENCE_DIR="${PROJECT_SOURCE_DIR}/data/reference")
  if(SCHEDLAB_TEST_FLAGS)
    target_compile_options(${name}_test PRIVATE ${SCHEDLAB_TEST_FLAGS})
  endif()
  if(SCHEDLAB_UNITY)
    set_target_properties(${name}_test PROPERTIES
      UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${SCHEDLAB_UNITY_BATCH})
  endif()
  if(SCHEDLAB_PCH)
    target_precompile_headers(${name}_test REUSE_FROM schedlab_test_pch)
  endif()
  gtest_discover_tests(${name}_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${name} ${cost})
endfunction()
