# Runs one example inside its own working directory and keeps what the
# reference-vs-library comparison in scripts/clients-c.sh needs: stdout.txt,
# stderr.txt and exitcode.txt.  CTest only sees pass/fail, so the raw outputs
# are saved here rather than parsed back out of CTest's logs.
#
# -DEXE=<program>  -DARGS=<a|b|...> ('|'-separated: ';' would split the
# add_test() command)  -DSAME_FILES=<a|b> (optional: two files that must be
# byte-identical afterwards, used for the compress/decompress round trip).
string(REPLACE "|" ";" args "${ARGS}")
execute_process(
  COMMAND "${EXE}" ${args}
  RESULT_VARIABLE rc
  OUTPUT_FILE stdout.txt
  ERROR_FILE stderr.txt
  TIMEOUT 290)
file(WRITE exitcode.txt "${rc}\n")
# Echo the outputs so that `ctest --output-on-failure` shows them.
file(READ stdout.txt out)
file(READ stderr.txt err)
message("${out}${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "${EXE} exited with: ${rc}")
endif()
if(SAME_FILES)
  string(REPLACE "|" ";" pair "${SAME_FILES}")
  list(GET pair 0 a)
  list(GET pair 1 b)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${a}" "${b}" RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "round trip changed the data: ${a} and ${b} differ")
  endif()
endif()
