# Installs sluice into a temporary prefix and builds examples/cpp_trainer
# against it out of tree, with libtorch from TORCH_DIR.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DTORCH_DIR=...
#         [-DCCACHE=/usr/bin/ccache] -P install_and_build_example.cmake
# The trainer is then WORK_DIR/build/cpp_trainer. With CCACHE, compiles go
# through it (paths hashed relative to SOURCE_DIR, as the main build's).
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

string(TIMESTAMP started "%s")
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
set(launcher)
if(CCACHE)
  set(ENV{CCACHE_BASEDIR} ${SOURCE_DIR})
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE})
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/cpp_trainer
    -B ${WORK_DIR}/build -G Ninja -DCMAKE_PREFIX_PATH=${prefix}
    -DTorch_DIR=${TORCH_DIR} -DCMAKE_BUILD_TYPE=Release ${launcher})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build --target cpp_trainer)
if(NOT EXISTS ${WORK_DIR}/build/cpp_trainer)
  message(FATAL_ERROR "the build made no cpp_trainer")
endif()
string(TIMESTAMP finished "%s")
math(EXPR seconds "${finished} - ${started}")
message("installed and built cpp_trainer in ${seconds} s")
