// SPDX-License-Identifier: Apache-2.0
#pragma once
// The dashboard's files, embedded in the binary at build time (web/embed.cmake
// generates web_assets_data.cpp in the build tree from web/src and
// web/vendor/uplot): the agent serves every byte itself, no CDN.
#include <span>
#include <string_view>

namespace gpulens::exposition {

struct WebAsset {
  std::string_view path;  // "/", "/assets/app.js", ...
  std::string_view content_type;
  std::string_view body;
};

std::span<const WebAsset> web_assets();

}  // namespace gpulens::exposition
