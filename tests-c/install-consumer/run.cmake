# Installs the build into a temporary prefix, then configures, builds and runs an
# outside project against it with find_package(b2nd). Fails on any step's failure.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install "${B2ND_BUILD_DIR}" --prefix "${prefix}")
foreach(f include/b2nd.h include/blosc2.h lib/libb2nd.so lib/libb2nd.a lib/pkgconfig/b2nd.pc
          lib/cmake/b2nd/b2ndConfig.cmake)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S "${CONSUMER_SRC}" -B "${WORK_DIR}/build" "-DCMAKE_PREFIX_PATH=${prefix}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run(${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${prefix}/lib" "${WORK_DIR}/build/consumer")
run("${WORK_DIR}/build/consumer_static")
