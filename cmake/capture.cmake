# SPDX-License-Identifier: Apache-2.0
# Runs PROGRAM with ARGS (separated by commas) and writes its stdout to OUT,
# failing the build when the program fails.
# Usage: cmake -DPROGRAM=... -DARGS=a,b -DOUT=... -P capture.cmake
string(REPLACE "," ";" args "${ARGS}")
execute_process(COMMAND ${PROGRAM} ${args} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} ${args} failed (${rc})")
endif()
file(WRITE ${OUT} "${out}")
