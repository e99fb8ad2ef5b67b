# SPDX-License-Identifier: Apache-2.0
# The injection library's fence (src/inject/CMakeLists.txt), checked: with its
# include root alone, the record's headers compile and any other part of gpulens
# does not. cmake -DCXX=<compiler> -DROOT=<build/layers/inject> -DSRC=<src/>
# -DOUT=<scratch dir> -P fence_check.cmake
file(MAKE_DIRECTORY ${OUT})
function(compiles include result)
  file(WRITE ${OUT}/fence.cpp "#include \"${include}\"\n")
  execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -I${ROOT}
    ${OUT}/fence.cpp RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc EQUAL 0)
    set(${result} TRUE PARENT_SCOPE)
  else()
    set(${result} FALSE PARENT_SCOPE)
    set(fence_error "${err}" PARENT_SCOPE)
  endif()
endfunction()
foreach(inside inject/chunk_builder.hpp inject/agent_link.hpp inject/schedule.hpp
    kernels/record/chunk_record.hpp kernels/record/kernel_names.hpp
    kernels/record/summary_datagram.hpp core/intervals.hpp)
  compiles(${inside} ok)
  if(NOT ok)
    message(FATAL_ERROR "inside the fence, ${inside} does not compile:\n${fence_error}")
  endif()
endforeach()
foreach(outside diagnosis/config.hpp kernels/view/analysis.hpp sources/tick_source.hpp
    cli/kernels_setup.hpp)
  if(NOT EXISTS ${SRC}/${outside})
    message(FATAL_ERROR "${SRC}/${outside} is gone: name another file outside the fence")
  endif()
  compiles(${outside} ok)
  if(ok)
    message(FATAL_ERROR "${outside} compiles inside the injection library's fence")
  endif()
endforeach()
