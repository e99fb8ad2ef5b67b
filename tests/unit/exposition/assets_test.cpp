// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "exposition/web_assets.hpp"

namespace gpulens::exposition {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string web(const std::string& name) {
  return read(std::string(GPULENS_SOURCE_DIR) + "/web/" + name);
}

std::map<std::string_view, std::string_view> served() {
  std::map<std::string_view, std::string_view> by_path;
  for (const auto& a : web_assets()) by_path[a.path] = a.body;
  return by_path;
}

// The build embeds web/ as it is now (web/embed.cmake): what the binary serves
// is web/src and the vendored uPlot, byte for byte, never a stale copy.
TEST(ServerAssets, EmbeddedDashboardIsWebSourcesAsTheyAre) {
  auto assets = served();
  EXPECT_EQ(assets["/"], web("src/index.html"));
  EXPECT_EQ(assets["/assets/icon.svg"], web("src/icon.svg"));
  EXPECT_EQ(assets["/assets/app.css"],
            web("vendor/uplot/uPlot.min.css") + "\n" + web("src/app.css"));
  const std::string js(assets["/assets/app.js"]);
  EXPECT_TRUE(js.starts_with("/*! uPlot 1.")) << js.substr(0, 40);
  std::size_t at = js.find(web("vendor/uplot/uPlot.iife.min.js"));
  EXPECT_NE(at, std::string::npos) << "uPlot is not in app.js";
  for (const char* part : {"src/format.js", "src/cards.js", "src/charts.js", "src/app.js"}) {
    const auto next = js.find(web(part), at);
    EXPECT_NE(next, std::string::npos) << part << " is not in app.js, or out of order";
    at = next;
  }
  EXPECT_TRUE(js.ends_with(web("src/app.js") + "\n})();\n"));
}

TEST(ServerAssets, EveryFileTheDashboardLoadsIsEmbedded) {
  std::map<std::string_view, const WebAsset*> by_path;
  for (const auto& a : web_assets()) by_path[a.path] = &a;
  for (const char* path : {"/", "/assets/app.js", "/assets/app.css", "/assets/icon.svg"}) {
    ASSERT_TRUE(by_path.contains(path)) << path;
    EXPECT_FALSE(by_path[path]->body.empty()) << path;
  }
  const auto html = by_path["/"]->body;
  EXPECT_NE(html.find("src=\"/assets/app.js\""), std::string::npos);
  EXPECT_NE(html.find("href=\"/assets/app.css\""), std::string::npos);
  // No CDN: nothing is fetched from another origin.
  for (const auto& a : web_assets()) {
    EXPECT_EQ(a.body.find("src=\"http"), std::string::npos) << a.path;
    EXPECT_EQ(a.body.find("href=\"http"), std::string::npos) << a.path;
  }
}

}  // namespace
}  // namespace gpulens::exposition
