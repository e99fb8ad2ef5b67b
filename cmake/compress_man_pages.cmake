# SPDX-License-Identifier: Apache-2.0
# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS): gzips the man pages of the
# staged package, as Debian policy wants them (lintian: uncompressed-manual-page)
# and RPM distributions ship them. -n: no name or time stamp, so the package stays
# reproducible. Pages already compressed are left as they are; `cmake --install`
# keeps them uncompressed.
find_program(GPULENS_GZIP gzip REQUIRED)
file(GLOB_RECURSE pages LIST_DIRECTORIES false "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*.[1-9]")
list(FILTER pages INCLUDE REGEX "/share/man/man[1-9]/[^/]+\\.[1-9]$")
foreach(page IN LISTS pages)
  execute_process(COMMAND ${GPULENS_GZIP} -9nf "${page}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${page} failed (${rc})")
  endif()
endforeach()
