# SPDX-License-Identifier: Apache-2.0
# libgpulens_launches.so's dlsym must leave by a jump to glibc's (interpose.cpp):
# glibc resolves dlsym(RTLD_NEXT, ...) from its caller's return address, so a call
# would make every RTLD_NEXT lookup of the job resolve from this library instead.
# cmake -DOBJDUMP=<objdump> -DLIB=<libgpulens_launches.so> -P jump_check.cmake
execute_process(COMMAND ${OBJDUMP} -d --no-show-raw-insn ${LIB} OUTPUT_VARIABLE dis
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objdump could not read ${LIB}")
endif()
string(FIND "${dis}" "<dlsym>:" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${LIB} has no dlsym")
endif()
string(SUBSTRING "${dis}" ${at} -1 body)
string(FIND "${body}" "\n\n" end)
string(SUBSTRING "${body}" 0 ${end} body)
if(NOT body MATCHES "jmp +\\*%r")
  message(FATAL_ERROR "dlsym in ${LIB} does not leave by a jump to glibc's:\n${body}")
endif()
