# SPDX-License-Identifier: Apache-2.0
# Bundles the dashboard into a C++ source of byte arrays, at build time, with
# nothing but CMake: web/src plus the vendored uPlot build (web/vendor/uplot,
# refreshed from npm by web/build.sh). The build runs it through a custom
# command (CMakeLists.txt, target gpulens_exposition); nothing generated is
# committed. Usage: cmake -DWEB=<web dir> -DOUT=<file.cpp> -P web/embed.cmake
# A new file under web/src must be added below and to the gpulens_embed() inputs in CMakeLists.txt.
cmake_minimum_required(VERSION 3.20)

function(web_text var path)
  file(READ "${WEB}/${path}" text)
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

web_text(uplot_version vendor/uplot/VERSION)
string(STRIP "${uplot_version}" uplot_version)
web_text(uplot_license vendor/uplot/LICENSE)
string(STRIP "${uplot_license}" uplot_license)
web_text(uplot_js vendor/uplot/uPlot.iife.min.js)
web_text(uplot_css vendor/uplot/uPlot.min.css)
web_text(index_html src/index.html)
web_text(app_css src/app.css)
web_text(icon_svg src/icon.svg)
set(app_js "/*! uPlot ${uplot_version}, https://github.com/leeoniya/uPlot\n${uplot_license}\n*/\n${uplot_js}\n(function () {\n\"use strict\";")
foreach(part src/format.js src/cards.js src/charts.js src/kernels.js src/app.js)
  web_text(text ${part})
  string(APPEND app_js "\n${text}")
endforeach()
string(APPEND app_js "\n})();\n")

# path, content type, body: the order is the served table's.
set(paths "/" "/assets/app.js" "/assets/app.css" "/assets/icon.svg")
set(types "text/html\; charset=utf-8" "text/javascript\; charset=utf-8"
    "text/css\; charset=utf-8" "image/svg+xml")
set(bodies index_html app_js app_css_all icon_svg)
set(app_css_all "${uplot_css}\n${app_css}")

set(tmp "${OUT}.part")
set(cpp "// clang-format off\n// Generated at build time by web/embed.cmake from web/src and web/vendor/uplot; do not edit.\n#include \"exposition/web_assets.hpp\"\n\nnamespace gpulens::exposition {\nnamespace {\n\n")
set(table "")
foreach(i RANGE 3)
  list(GET bodies ${i} body_var)
  list(GET paths ${i} path)
  list(GET types ${i} type)
  file(WRITE "${tmp}" "${${body_var}}")
  file(READ "${tmp}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(REGEX REPLACE "((0x..,){24})" "\\1\n  " hex "${hex}")
  string(APPEND cpp "constexpr unsigned char kAsset${i}[] = {\n  ${hex}\n};\n\n")
  string(APPEND table "    {\"${path}\", \"${type}\", view(kAsset${i}, sizeof kAsset${i})},\n")
endforeach()
file(REMOVE "${tmp}")
string(APPEND cpp "std::string_view view(const unsigned char* data, std::size_t size) {\n  return {reinterpret_cast<const char*>(data), size};\n}\n\nconst WebAsset kAssets[] = {\n${table}};\n\n}  // namespace\n\nstd::span<const WebAsset> web_assets() { return kAssets; }\n\n}  // namespace gpulens::exposition\n")
# Written only when it changed, so an unchanged dashboard compiles nothing.
file(CONFIGURE OUTPUT "${OUT}" CONTENT "${cpp}" @ONLY)
