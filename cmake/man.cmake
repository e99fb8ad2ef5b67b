# SPDX-License-Identifier: Apache-2.0
# Man pages, written by hand in docs/man/ (man(7) macros); included from
# cmake/install.cmake. Each page gets the version and this prefix's paths at
# configure time (@PROJECT_VERSION@, @GPULENS_MAN_DATADIR@, @GPULENS_MAN_DOCDIR@,
# @GPULENS_MAN_UNITDIR@) into build/man/, and is gzipped there at build time:
# Debian wants man pages compressed (lintian: manpage-not-compressed) and CPack's
# DEB generator installs files as they are. The .gz (gzip -9n: no name or time
# inside, so the build is reproducible) is what gets installed.
# tests/e2e/man_pages.py (ctest man_pages) checks build/man/: groff and man
# warnings, the sections, every option of `--help`, every key of `gpulens top`.
set(GPULENS_MAN_DIR ${CMAKE_BINARY_DIR}/man)
set(GPULENS_MAN_DATADIR ${CMAKE_INSTALL_FULL_DATADIR}/gpulens)
set(GPULENS_MAN_DOCDIR ${CMAKE_INSTALL_FULL_DOCDIR})
set(GPULENS_MAN_UNITDIR ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)

# Every page of docs/man; tests/e2e/package.sh and the man_pages test check that
# every command the binary declares has one.
file(GLOB GPULENS_MAN_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/*.1)
find_program(GPULENS_GZIP gzip)
set(GPULENS_MAN_PAGES "")
foreach(source ${GPULENS_MAN_SOURCES})
  get_filename_component(name ${source} NAME)
  set(page ${GPULENS_MAN_DIR}/${name})
  configure_file(${source} ${page} @ONLY)
  if(GPULENS_GZIP)
    add_custom_command(OUTPUT ${page}.gz
      COMMAND ${GPULENS_GZIP} -9 -n -k -f ${page}
      DEPENDS ${page}
      COMMENT "Compressing the man page ${name}" VERBATIM)
    list(APPEND GPULENS_MAN_PAGES ${page}.gz)
  else()
    list(APPEND GPULENS_MAN_PAGES ${page})
  endif()
endforeach()
if(NOT GPULENS_GZIP)
  message(STATUS "gzip not found: installing the man pages uncompressed")
endif()
add_custom_target(gpulens_man ALL DEPENDS ${GPULENS_MAN_PAGES})
# The pages name installed paths (the example, the unit): those of the prefix
# they are installed under, which `cmake --install --prefix` and CPack (always
# /usr) choose at install time, not the build's. Like the unit, each page is
# written at install time with this build's prefix replaced, then gzipped.
set(GPULENS_MAN_BUILT_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(page ${GPULENS_MAN_PAGES})
  string(REGEX REPLACE "\\.gz$" "" plain "${page}")
  get_filename_component(name "${plain}" NAME)
  install(CODE "
    file(READ \"${plain}\" text)
    string(REPLACE \"${GPULENS_MAN_BUILT_PREFIX}/\" \"\${CMAKE_INSTALL_PREFIX}/\" text \"\${text}\")
    set(dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}/man1\")
    file(MAKE_DIRECTORY \"\${dir}\")
    file(WRITE \"\${dir}/${name}\" \"\${text}\")
    if(EXISTS \"${GPULENS_GZIP}\")
      execute_process(COMMAND \"${GPULENS_GZIP}\" -9 -n -f \"\${dir}/${name}\" RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR \"gzip \${dir}/${name} failed\")
      endif()
      set(out \"\${dir}/${name}.gz\")
    else()
      set(out \"\${dir}/${name}\")
    endif()
    message(STATUS \"Installing: \${out}\")
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${out}\")
  ")
endforeach()
