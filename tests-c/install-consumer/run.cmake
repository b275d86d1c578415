# Installs the build into a temporary prefix, checks every installed name (b2nd's and the
# reference's), then builds and runs an outside project against it: with find_package(b2nd),
# with find_package(Blosc2), and with `pkg-config blosc2` as python-blosc2's build does.
# Fails on any step's failure.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install "${B2ND_BUILD_DIR}" --prefix "${prefix}")
foreach(f include/b2nd.h include/blosc2.h include/caterva.h
          include/blosc2/blosc2-common.h include/blosc2/blosc2-export.h
          include/blosc2/blosc2-stdio.h include/blosc2/codecs-registry.h
          include/blosc2/filters-registry.h include/blosc2/tuners-registry.h
          lib/libb2nd.so lib/libb2nd.so.0 lib/libb2nd.a
          lib/libblosc2.so lib/libblosc2.so.9 lib/libblosc2.a
          lib/pkgconfig/b2nd.pc lib/pkgconfig/blosc2.pc
          lib/cmake/b2nd/b2ndConfig.cmake lib/cmake/Blosc2/Blosc2Config.cmake
          lib/cmake/Blosc2/Blosc2ConfigVersion.cmake)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

# Each shared library answers to the name programs record.
find_program(READELF readelf REQUIRED)
foreach(pair "libb2nd.so.0;libb2nd.so.0" "libblosc2.so.9;libblosc2.so.9")
  list(GET pair 0 file)
  list(GET pair 1 soname)
  run("${READELF}" -d "${prefix}/lib/${file}")
  if(NOT out MATCHES "Library soname: \\[${soname}\\]")
    message(FATAL_ERROR "${file} has no SONAME ${soname}:\n${out}")
  endif()
endforeach()

# The pkg-config files name this prefix, not the configured one.
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
foreach(pc b2nd blosc2)
  run("${PKG_CONFIG}" --cflags ${pc})
  string(STRIP "${out}" out)
  if(NOT out STREQUAL "-I${prefix}/include")
    message(FATAL_ERROR "pkg-config --cflags ${pc} gives '${out}', not -I${prefix}/include")
  endif()
endforeach()
run("${PKG_CONFIG}" --exists "blosc2 >= 3.3.0")
run("${PKG_CONFIG}" --modversion blosc2)
if(NOT out MATCHES "^3\\.3\\.5")
  message(FATAL_ERROR "blosc2.pc says version ${out}")
endif()

run(${CMAKE_COMMAND} -S "${CONSUMER_SRC}" -B "${WORK_DIR}/build" "-DCMAKE_PREFIX_PATH=${prefix}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
foreach(exe consumer blosc2_consumer)
  run(${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${prefix}/lib" "${WORK_DIR}/build/${exe}")
endforeach()
run("${WORK_DIR}/build/consumer_static")
run("${WORK_DIR}/build/blosc2_consumer_static")

# As a client's Makefile would: cc $(pkg-config --cflags --libs blosc2); the program records
# libblosc2.so.9 and runs on this library through it.
run("${PKG_CONFIG}" --cflags --libs blosc2)
separate_arguments(flags UNIX_COMMAND "${out}")
run("${CC}" "${CONSUMER_SRC}/main.c" ${flags} -o "${WORK_DIR}/pc_consumer")
run("${READELF}" -d "${WORK_DIR}/pc_consumer")
if(NOT out MATCHES "Shared library: \\[libblosc2.so.9\\]")
  message(FATAL_ERROR "a program linked with -lblosc2 does not record libblosc2.so.9:\n${out}")
endif()
run(${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${prefix}/lib" "${WORK_DIR}/pc_consumer")
