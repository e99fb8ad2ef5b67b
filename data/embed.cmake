# SPDX-License-Identifier: Apache-2.0
# Compiles the report's data tables (data/gpu_peaks.json, data/prices.json) into
# a C++ source at build time, so an installed or copied binary has them without
# any file beside it; data/ stays the one copy that people edit. Files in
# --data-dir, $GPULENS_DATA_DIR or /etc/gpulens override these built-in copies
# (src/verdict/data_files.hpp). Run by a custom command (CMakeLists.txt, target
# gpulens_verdict); nothing generated is committed.
# Usage: cmake -DDATA=<data dir> -DOUT=<file.cpp> -P data/embed.cmake
cmake_minimum_required(VERSION 3.20)

set(files gpu_peaks.json prices.json)
set(cpp "// clang-format off\n// Generated at build time by data/embed.cmake from data/; do not edit.\n#include \"verdict/data_files.hpp\"\n\nnamespace gpulens::verdict {\nnamespace {\n\n")
set(table "")
set(i 0)
foreach(name ${files})
  # Bytes, not a raw string literal: no delimiter can clash with the JSON's text.
  file(READ "${DATA}/${name}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(REGEX REPLACE "((0x..,){24})" "\\1\n  " hex "${hex}")
  string(APPEND cpp "constexpr unsigned char kFile${i}[] = {\n  ${hex}\n};\n\n")
  string(APPEND table "  if (name == \"${name}\") return view(kFile${i}, sizeof kFile${i});\n")
  math(EXPR i "${i} + 1")
endforeach()
string(APPEND cpp "std::string_view view(const unsigned char* data, std::size_t size) {\n  return {reinterpret_cast<const char*>(data), size};\n}\n\n}  // namespace\n\nstd::optional<std::string_view> builtin_data_file(std::string_view name) {\n${table}  return std::nullopt;\n}\n\n}  // namespace gpulens::verdict\n")
# Written only when it changed, so unchanged tables compile nothing.
file(CONFIGURE OUTPUT "${OUT}" CONTENT "${cpp}" @ONLY)
