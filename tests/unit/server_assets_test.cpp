#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "exposition/web_assets.hpp"

namespace gpulens::server {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The same digest as web/scripts/embed.mjs: name, NUL, content, NUL per file.
std::string web_sources_digest() {
  static const char* const kSources[] = {"src/index.html", "src/app.css",      "src/format.js",
                                         "src/cards.js",   "src/charts.js",    "src/app.js",
                                         "src/icon.svg",   "package-lock.json"};
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  for (const char* name : kSources) {
    const std::string content = read(std::string(GPULENS_SOURCE_DIR) + "/web/" + name);
    EVP_DigestUpdate(ctx, name, std::strlen(name) + 1);
    EVP_DigestUpdate(ctx, content.data(), content.size());
    EVP_DigestUpdate(ctx, "", 1);
  }
  std::array<unsigned char, 32> out{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, out.data(), &len);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  for (unsigned char b : out) {
    static const char* const kHex = "0123456789abcdef";
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

TEST(ServerAssets, EmbeddedDashboardIsUpToDateWithWebSources) {
  const std::string generated =
      read(std::string(GPULENS_SOURCE_DIR) + "/src/exposition/web_assets_data.cpp");
  const auto at = generated.find("web-sources-sha256: ");
  ASSERT_NE(at, std::string::npos)
      << "src/exposition/web_assets_data.cpp was not made by web/build.sh";
  EXPECT_EQ(generated.substr(at + 20, 64), web_sources_digest())
      << "web/src changed: run web/build.sh to embed the new dashboard";
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
}  // namespace gpulens::server
