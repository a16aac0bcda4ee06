# Small helpers so every target is declared the same way.
#
#   sluice_cc_library(NAME engine SRCS a.cc HDRS a.h DEPS sluice::io)
#     -> target sluice_engine, alias sluice::engine, include root = repo root.
#   sluice_cc_test(NAME channel_test SRCS channel_test.cc DEPS sluice::engine
#                  [LABELS concurrency])
#     -> a googletest binary registered with ctest. A ThreadSanitizer build
#        (SLUICE_TSAN) builds only the tests labelled "concurrency".

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
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  if(SLUICE_TSAN AND NOT "concurrency" IN_LIST ARG_LABELS)
    return()
  endif()
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest_main)
  gtest_discover_tests(${ARG_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${ARG_LABELS}"
    DISCOVERY_TIMEOUT 60)
endfunction()
