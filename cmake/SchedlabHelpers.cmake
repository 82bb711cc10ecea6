# SPDX-License-Identifier: GPL-2.0-only
# schedlab_add_library(NAME SOURCES ... DEPENDS ...): one static library per layer.
function(schedlab_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_library(schedlab_${name} STATIC ${ARG_SOURCES})
  target_include_directories(schedlab_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(schedlab_${name} PUBLIC ${ARG_DEPENDS})
  if(SCHEDLAB_LIBRARY_FLAGS)
    target_compile_options(schedlab_${name} PRIVATE ${SCHEDLAB_LIBRARY_FLAGS})
  endif()
endfunction()

# schedlab_add_tests(NAME SOURCES ... DEPENDS ...): one GoogleTest binary per layer,
# each TEST registered with CTest. Unit tests sit next to the code they test.
function(schedlab_add_tests name)
  if(NOT SCHEDLAB_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_executable(${name}_test ${ARG_SOURCES})
  target_link_libraries(${name}_test PRIVATE ${ARG_DEPENDS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name}_test PRIVATE
    SCHEDLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SCHEDLAB_REFERENCE_DIR="${PROJECT_SOURCE_DIR}/data/reference")
  gtest_discover_tests(${name}_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${name})
endfunction()
