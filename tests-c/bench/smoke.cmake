# The benchmark still builds and measures: benches/bench.c as a program, and as a plugin run
# by benches/driver.c (the plugin loaded as both libraries), each on one quick row, and the
# program on one quick b2nd row.
set(ROW "chunk/randint-i4/lz4/c5/shuffle/t1")
execute_process(COMMAND "${STANDALONE}" --quick --exact "${ROW}"
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bench exited with ${rc}")
endif()
foreach(metric cMBps dMBps ratio)
  if(NOT out MATCHES "${ROW}\t${metric}\t[0-9.]+\n")
    message(FATAL_ERROR "bench printed no ${metric} for ${ROW}:\n${out}")
  endif()
endforeach()
if(out MATCHES "bitshuffle")
  message(FATAL_ERROR "--exact ran other rows:\n${out}")
endif()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# A b2nd row (32 MiB with --quick): every one of its measurements, slices and items included.
set(B2ND_ROW "b2nd/smooth3d-f8-32MiB/lz4/c5/shuffle")
execute_process(COMMAND "${STANDALONE}" --quick --exact "${B2ND_ROW}" --tmp "${WORK}"
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bench exited with ${rc} on ${B2ND_ROW}")
endif()
foreach(m from_cbuffer\tcMBps from_cbuffer\tratio to_cbuffer\tdMBps slice10x10x10\tslice_us
          file_full_read\tdMBps file_slice10x10x10\tslice_us item\tslice_us file_item\tslice_us
          file_slice10x10x10_threads2\tslices_ps file_item_threads4\titems_ps)
  if(NOT out MATCHES "${B2ND_ROW}/${m}\t[0-9.]+\n")
    message(FATAL_ERROR "bench printed no ${m} for ${B2ND_ROW}:\n${out}")
  endif()
endforeach()
execute_process(COMMAND "${DRIVER}" "${PLUGIN}" "${PLUGIN}" "${WORK}/a.tsv" "${WORK}/b.tsv" 2
                        --quick --only "${ROW}" --tmp "${WORK}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "driver exited with ${rc}")
endif()
foreach(side a b)
  file(STRINGS "${WORK}/${side}.tsv" lines REGEX "^${ROW}\tdMBps\t")
  list(LENGTH lines n)
  if(NOT n EQUAL 2)
    message(FATAL_ERROR "${side}.tsv holds ${n} dMBps lines for ${ROW}, not one per round (2)")
  endif()
  file(STRINGS "${WORK}/${side}.tsv" lines REGEX "^memcpy\tmemcpy_MBps\t")
  list(LENGTH lines n)
  if(NOT n EQUAL 2)
    message(FATAL_ERROR "${side}.tsv holds ${n} memcpy lines, not 2")
  endif()
endforeach()
