# Small helpers so every target is declared the same way.
#
#   sluice_cc_library(NAME engine SRCS a.cc HDRS a.h DEPS sluice::io)
#     -> target sluice_engine, alias sluice::engine, include root = repo root.
#   sluice_cc_test(NAME channel_test SRCS channel_test.cc DEPS sluice::engine
#                  [LABELS concurrency] [STANDALONE])
#     -> googletest cases registered with ctest. The tests of one folder
#        share a binary, one for those labelled "concurrency" and one for
#        the rest (<folder>_concurrency_tests, <folder>_tests), compiled as
#        a unity build: a test file costs its own code, not another round of
#        asio and googletest. STANDALONE keeps a binary of its own, named
#        NAME. A ThreadSanitizer build (SLUICE_TSAN) builds only the tests
#        labelled "concurrency".
#   sluice_precompile_library_headers(sluice_engine)
#     -> the library's sources reuse the libraries' precompiled header.
#
# Precompiled headers (SLUICE_PCH, on by default) parse asio, abseil,
# googletest and the config messages once per build instead of once per
# source file: about a third of a test's compile time. Each set is
# compiled by a target of its own with exactly the flags of the targets
# that reuse it (cmake/pch/).

function(sluice_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;HDRS;DEPS" ${ARGN})
  set(target sluice_${ARG_NAME})
  add_library(${target} STATIC ${ARG_SRCS} ${ARG_HDRS})
  add_library(sluice::${ARG_NAME} ALIAS ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}>)
  target_link_libraries(${target} PUBLIC ${ARG_DEPS})
endfunction()

function(sluice_cc_test)
  cmake_parse_arguments(ARG "STANDALONE" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  if(SLUICE_TSAN AND NOT "concurrency" IN_LIST ARG_LABELS)
    return()
  endif()
  if(ARG_STANDALONE)
    sluice_add_test_binary(${ARG_NAME} "${ARG_SRCS}" "${ARG_DEPS}"
      "${ARG_LABELS}")
    return()
  endif()
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR}/tests
    ${CMAKE_CURRENT_SOURCE_DIR})
  string(REPLACE "/" "_" group "${folder}")
  if("concurrency" IN_LIST ARG_LABELS)
    string(APPEND group "_concurrency_tests")
  else()
    string(APPEND group "_tests")
  endif()
  set_property(DIRECTORY APPEND PROPERTY SLUICE_TEST_GROUPS ${group})
  set_property(DIRECTORY APPEND PROPERTY SLUICE_TEST_${group}_SRCS ${ARG_SRCS})
  set_property(DIRECTORY APPEND PROPERTY SLUICE_TEST_${group}_DEPS ${ARG_DEPS})
  set_property(DIRECTORY PROPERTY SLUICE_TEST_${group}_LABELS ${ARG_LABELS})
  get_property(scheduled DIRECTORY PROPERTY SLUICE_TEST_GROUPS_SCHEDULED)
  if(NOT scheduled)
    set_property(DIRECTORY PROPERTY SLUICE_TEST_GROUPS_SCHEDULED ON)
    cmake_language(DEFER CALL sluice_add_grouped_test_binaries)
  endif()
endfunction()

# Called at the end of a test folder's CMakeLists.txt: one binary per group
# of sluice_cc_test calls.
function(sluice_add_grouped_test_binaries)
  get_property(groups DIRECTORY PROPERTY SLUICE_TEST_GROUPS)
  list(REMOVE_DUPLICATES groups)
  foreach(group ${groups})
    get_property(srcs DIRECTORY PROPERTY SLUICE_TEST_${group}_SRCS)
    get_property(deps DIRECTORY PROPERTY SLUICE_TEST_${group}_DEPS)
    get_property(labels DIRECTORY PROPERTY SLUICE_TEST_${group}_LABELS)
    list(REMOVE_DUPLICATES srcs)
    list(REMOVE_DUPLICATES deps)
    sluice_add_test_binary(${group} "${srcs}" "${deps}" "${labels}")
  endforeach()
endfunction()

# One googletest binary whose cases ctest runs one by one.
function(sluice_add_test_binary name srcs deps labels)
  add_executable(${name} ${srcs})
  add_dependencies(sluice_tests ${name})
  target_link_libraries(${name} PRIVATE ${deps} GTest::gtest_main)
  sluice_test_compile_settings(${name})
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${labels}"
    DISCOVERY_TIMEOUT 60)
endfunction()

# Settings every googletest binary compiles with, the target of the tests'
# precompiled header included. A release build compiles the tests' own
# code at -O1 (the libraries they test stay at -O3): a third less compile
# time for code that only drives the libraries. SLUICE_TEST_COMPILE_OPTIONS
# come last (the sanitizer builds of scripts/test.sh pass -O0). Test support
# libraries (tests/testing, data sets) keep the build type's flags: they
# generate and hash data that many tests share.
function(sluice_test_compile_settings target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O1>
    ${SLUICE_TEST_COMPILE_OPTIONS})
  # The fuzz targets need coverage of the libraries they drive, not of the
  # tests: their own code compiles a fifth faster without it.
  if(SLUICE_FUZZ)
    target_compile_options(${target} PRIVATE -fno-sanitize=fuzzer-no-link)
  endif()
  if(SLUICE_HAVE_LLD)
    target_link_options(${target} PRIVATE -fuse-ld=lld)
  endif()
  if(SLUICE_PCH AND NOT target STREQUAL "sluice_test_pch")
    # The header's macros and include paths come with asio and the protos,
    # and its asio headers need asio's compiled half (in sluice::io): a
    # test that uses neither still builds with them, or GCC would not take
    # the precompiled header.
    target_link_libraries(${target} PRIVATE sluice::io sluice::proto)
    target_precompile_headers(${target} REUSE_FROM sluice_test_pch)
  endif()
endfunction()

function(sluice_precompile_library_headers target)
  if(SLUICE_PCH)
    target_precompile_headers(${target} REUSE_FROM sluice_library_pch)
  endif()
endfunction()

# The target that compiles the libraries' precompiled header.
function(sluice_add_library_pch_target)
  if(SLUICE_PCH)
    add_library(sluice_library_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch/anchor.cc)
    target_include_directories(sluice_library_pch PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(sluice_library_pch PRIVATE sluice_asio absl::status
      absl::statusor absl::strings)
    target_precompile_headers(sluice_library_pch PRIVATE
      ${PROJECT_SOURCE_DIR}/cmake/pch/library_headers.h)
  endif()
endfunction()

# The target that compiles the tests' precompiled header: an executable,
# so that it has the tests' flags (-fPIE, not a library's -fPIC).
function(sluice_add_test_pch_target)
  if(SLUICE_PCH)
    add_executable(sluice_test_pch ${PROJECT_SOURCE_DIR}/cmake/pch/anchor_main.cc)
    target_include_directories(sluice_test_pch PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(sluice_test_pch PRIVATE sluice::proto sluice::io
      absl::status absl::statusor absl::strings GTest::gmock
      GTest::gtest_main)
    target_precompile_headers(sluice_test_pch PRIVATE
      ${PROJECT_SOURCE_DIR}/cmake/pch/test_headers.h)
    sluice_test_compile_settings(sluice_test_pch)
  endif()
endfunction()
