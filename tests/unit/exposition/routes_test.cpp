// SPDX-License-Identifier: Apache-2.0
// The paths of src/exposition/routes.cpp on a running server: /metrics as the
// scraper asks for it, the dashboard's assets, and register_routes' groups.
#include "exposition/routes.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "exposition/web_assets.hpp"
#include "http_test_client.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

using Running = gpulens::testing::RunningServer;

TEST(ServerHttp, ServesMetricsApiAndDashboard) {
  Running r({});
  ASSERT_TRUE(r.server) << r.error;
  auto c = r.client();
  ASSERT_TRUE(c.Get("/api/v1/version"));  // counted by the time /metrics renders
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  EXPECT_EQ(m->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(m->body.find("gpulens_sm_active_ratio{gpu=\"0\""), std::string::npos);
  EXPECT_NE(m->body.find("gpulens_http_requests_total"), std::string::npos) << "self metrics";

  auto latest = c.Get("/api/v1/latest");
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->status, 200);
  const auto j = nlohmann::json::parse(latest->body);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["state"]["id"], "sm_underused");
  EXPECT_DOUBLE_EQ(j["gpus"][0]["metrics"]["sm_active"].get<double>(), 0.8);
  // Command lines are hidden unless --cmdline.
  EXPECT_EQ(latest->body.find("SECRET"), std::string::npos);
  EXPECT_EQ(latest->get_header_value("X-Content-Type-Options"), "nosniff");

  for (const char* path :
       {"/api/v1/version", "/api/v1/devices", "/api/v1/health", "/api/v1/alerts"}) {
    auto res = c.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path;
    EXPECT_TRUE(nlohmann::json::accept(res->body)) << path;
  }
  auto index = c.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("/assets/app.js"), std::string::npos);
  EXPECT_NE(index->get_header_value("Content-Security-Policy").find("default-src 'self'"),
            std::string::npos);
  auto js = c.Get("/assets/app.js");
  ASSERT_TRUE(js);
  EXPECT_NE(js->body.find("uPlot"), std::string::npos);
}

// The head and body of a raw answer, split at the blank line.
std::pair<std::string, std::string> routes_split_answer(const std::string& reply) {
  const auto end = reply.find("\r\n\r\n");
  if (end == std::string::npos) return {reply, ""};
  return {reply.substr(0, end + 2), reply.substr(end + 4)};
}

std::string routes_gunzip(const std::string& packed) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return "(inflateInit2 failed)";
  std::string out(1 << 22, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.avail_in = static_cast<uInt>(packed.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int r = inflate(&z, Z_FINISH);
  out.resize(z.total_out);
  inflateEnd(&z);
  return r == Z_STREAM_END ? out : "(inflate failed)";
}

// OpenMetrics where Accept asks for it, gzip where Accept-Encoding does; never
// cached, and Vary names both so that a cache in between keeps them apart.
TEST(ServerRoutes, MetricsAreEncodedAsTheScraperAsks) {
  Running r({});
  ASSERT_TRUE(r.server) << r.error;
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  const auto [plain_head, plain] =
      routes_split_answer(gpulens::testing::raw_exchange(r.port(), get + "\r\n"));
  EXPECT_TRUE(plain_head.starts_with("HTTP/1.1 200")) << plain_head;
  EXPECT_NE(plain_head.find("Content-Type: text/plain; version=0.0.4"), std::string::npos)
      << plain_head;
  EXPECT_NE(plain_head.find("Vary: Accept, Accept-Encoding"), std::string::npos) << plain_head;
  EXPECT_NE(plain_head.find("Cache-Control: no-store"), std::string::npos) << plain_head;
  EXPECT_EQ(plain_head.find("Content-Encoding"), std::string::npos) << plain_head;
  EXPECT_NE(plain.find("gpulens_sm_active_ratio{gpu=\"0\""), std::string::npos);
  EXPECT_FALSE(plain.ends_with("# EOF\n"));

  const auto [om_head, om] = routes_split_answer(gpulens::testing::raw_exchange(
      r.port(), get + "Accept: application/openmetrics-text;version=1.0.0\r\n\r\n"));
  EXPECT_NE(om_head.find("Content-Type: application/openmetrics-text"), std::string::npos)
      << om_head;
  EXPECT_TRUE(om.ends_with("# EOF\n"));

  const auto [gz_head, gz] = routes_split_answer(
      gpulens::testing::raw_exchange(r.port(), get + "Accept-Encoding: gzip\r\n\r\n"));
  EXPECT_NE(gz_head.find("Content-Encoding: gzip"), std::string::npos) << gz_head;
  const std::string unpacked = routes_gunzip(gz);
  EXPECT_NE(unpacked.find("gpulens_sm_active_ratio{gpu=\"0\""), std::string::npos)
      << unpacked.substr(0, 200);
}

// Every asset is served at its path, as it is compiled in, revalidated each time.
TEST(ServerRoutes, DashboardAssetsAreServedAsCompiledIn) {
  Running r({});
  ASSERT_TRUE(r.server) << r.error;
  auto c = r.client();
  ASSERT_FALSE(web_assets().empty());
  for (const auto& asset : web_assets()) {
    const std::string path(asset.path);
    auto res = c.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path;
    EXPECT_EQ(res->get_header_value("Content-Type"), std::string(asset.content_type)) << path;
    EXPECT_EQ(res->get_header_value("Cache-Control"), "no-cache") << path;
    EXPECT_EQ(res->body, std::string(asset.body.data(), asset.body.size())) << path;
  }
}

// register_routes adds each group: /metrics, the JSON API, Slurm's parts, the assets.
TEST(ServerRoutes, EveryGroupIsRegistered) {
  Running r({});
  ASSERT_TRUE(r.server) << r.error;
  const auto paths = r.server->route_paths();
  const auto has = [&](const std::string& p) {
    return std::find(paths.begin(), paths.end(), p) != paths.end();
  };
  EXPECT_TRUE(has("/metrics"));
  EXPECT_TRUE(has("/api/v1/latest"));
  EXPECT_TRUE(has("/api/v1/slurm/job"));
  EXPECT_TRUE(has("/"));
}

}  // namespace
}  // namespace gpulens::exposition
