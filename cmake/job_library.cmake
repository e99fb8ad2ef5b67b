# SPDX-License-Identifier: Apache-2.0
# A library of gpulens that goes into people's jobs (libgpulens_kernels.so,
# libgpulens_launches.so), built one way: beside the gpulens binary in the build tree
# and in lib/gpulens/ once installed (where `gpulens run` looks,
# src/cli/install_paths.hpp); only the symbols of EXPORTS (a version script) shown;
# libstdc++ and libgcc linked in and hidden, so it loads into any job whatever the
# job's own C++ runtime; the binaries' glibc floor where there is one.
#   gpulens_job_library(TARGET OUTPUT_NAME NAME EXPORTS FILE)
function(gpulens_job_library target)
  cmake_parse_arguments(JOB "" "OUTPUT_NAME;EXPORTS" "" ${ARGN})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${JOB_OUTPUT_NAME} LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc
    -Wl,--exclude-libs,ALL -Wl,-z,defs -Wl,--version-script=${JOB_EXPORTS})
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${JOB_EXPORTS})
  if(TARGET gpulens_glibc_compat_pic)
    target_link_libraries(${target} PRIVATE gpulens_glibc_compat_pic)
  endif()
  add_dependencies(gpulens ${target})
  install(TARGETS ${target} LIBRARY DESTINATION ${GPULENS_INSTALL_PRIVATE_LIBDIR})
endfunction()
