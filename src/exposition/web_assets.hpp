#pragma once
// The dashboard's files, embedded in the binary at build time (web/build.sh
// writes web_assets_data.cpp): the agent serves every byte itself, no CDN.
#include <span>
#include <string_view>

namespace gpulens::server {

struct WebAsset {
  std::string_view path;  // "/", "/assets/app.js", ...
  std::string_view content_type;
  std::string_view body;
};

std::span<const WebAsset> web_assets();

}  // namespace gpulens::server
