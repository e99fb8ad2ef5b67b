# SPDX-License-Identifier: Apache-2.0
# One man page from the text of `gpulens [COMMAND] --help` (help2man), so the page
# says what the binary says. COMMAND empty: the page of gpulens itself.
# Usage: cmake -DHELP2MAN=... -DPROGRAM=.../gpulens -DCOMMAND=report -DOUT=gpulens-report.1 -P man.cmake
if(COMMAND)
  set(page_name gpulens-${COMMAND})
  execute_process(COMMAND ${PROGRAM} ${COMMAND} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${COMMAND} --help failed (${rc})")
  endif()
  # The first line of the command's description names the page.
  string(REGEX MATCH "^([^\n]+)" first "${help}")
  string(STRIP "${CMAKE_MATCH_1}" summary)
  string(REGEX REPLACE "[,:;]$" "" summary "${summary}")  # a sentence that goes on
  set(help_option "--help-option=${COMMAND} --help")
else()
  set(page_name gpulens)
  set(summary "what your NVIDIA GPUs are really doing")
  set(help_option "--help-option=--help")
endif()
execute_process(
  COMMAND ${HELP2MAN} --no-info --no-discard-stderr "--version-option=--version" "${help_option}"
    "--name=${summary}" --section=1 --source=gpulens --manual=gpulens ${PROGRAM}
  OUTPUT_VARIABLE man RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man ${page_name} failed (${rc})")
endif()
# help2man names every page after the executable; a command's page is gpulens-COMMAND.
if(COMMAND)
  string(REGEX REPLACE "\\.TH GPULENS " ".TH GPULENS-${COMMAND} " man "${man}")
  string(REGEX REPLACE "\\.SH NAME\ngpulens " ".SH NAME\ngpulens-${COMMAND} " man "${man}")
endif()
file(WRITE ${OUT} "${man}")
