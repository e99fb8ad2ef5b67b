# SPDX-License-Identifier: Apache-2.0
# The recordings of tests/fixtures/ and examples/ over 300 KB are committed as
# NAME.xz (scripts/fixtures.sh says why and packs them); git ignores NAME. Here,
# at configure time, each NAME is restored beside its .xz where it is missing or
# older than the .xz, so every test, example, doc and the install read the paths
# they always did. scripts/fixtures.sh does the same without CMake.
file(GLOB_RECURSE GPULENS_PACKED_RECORDINGS CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/tests/fixtures/*.xz ${CMAKE_SOURCE_DIR}/examples/*.xz)
set(restored 0)
string(MD5 build_tag ${CMAKE_BINARY_DIR})
foreach(packed ${GPULENS_PACKED_RECORDINGS})
  string(REGEX REPLACE "\\.xz$" "" plain ${packed})
  # A pull that changes a .xz configures again; so does a restored copy deleted
  # (a missing input of the configure step makes Ninja re-run CMake).
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${packed} ${plain})
  # IS_NEWER_THAN is also true when the copy is missing (or as old as the .xz).
  if(NOT ${packed} IS_NEWER_THAN ${plain})
    continue()
  endif()
  find_program(GPULENS_XZ xz)
  if(NOT GPULENS_XZ)
    message(FATAL_ERROR "xz is needed to restore ${plain} from its .xz "
      "(Debian: apt-get install xz-utils, or scripts/setup.sh)")
  endif()
  # A temporary name of this build folder, then a rename: an interrupted configure
  # leaves no half recording, and two build folders configured at once (debug and
  # asan) do not write into one file.
  set(tmp ${plain}.${build_tag}.unxz-tmp)
  execute_process(COMMAND ${GPULENS_XZ} -dc ${packed} OUTPUT_FILE ${tmp}
    RESULT_VARIABLE status ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    file(REMOVE ${tmp})
    message(FATAL_ERROR "xz -dc ${packed} failed (${status}): ${error}")
  endif()
  file(RENAME ${tmp} ${plain})
  math(EXPR restored "${restored} + 1")
endforeach()
if(restored GREATER 0)
  list(LENGTH GPULENS_PACKED_RECORDINGS packed_count)
  message(STATUS "Recordings restored from .xz: ${restored} of ${packed_count} (cmake/fixtures.cmake)")
endif()
