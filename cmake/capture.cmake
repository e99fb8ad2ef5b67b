# Runs PROGRAM with ARGS (a list) and writes its stdout to OUT, failing the build
# when the program fails. Usage: cmake -DPROGRAM=... -DARGS=a;b -DOUT=... -P capture.cmake
execute_process(COMMAND ${PROGRAM} ${ARGS} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} ${ARGS} failed (${rc})")
endif()
file(WRITE ${OUT} "${out}")
