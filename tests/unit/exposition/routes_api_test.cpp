// SPDX-License-Identifier: Apache-2.0
// The JSON API of src/exposition/routes_api.cpp on a running server: the index
// of routes, command lines only when asked, the history's parameters checked.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "http_test_client.hpp"
#include "server_support.hpp"
#include "store/history_store.hpp"

namespace gpulens::exposition {
namespace {

using gpulens::testing::scratch_dir;
using Running = gpulens::testing::RunningServer;

TEST(ServerHttp, ApiIndexListsExactlyTheRoutesServed) {
  Running r({});
  ASSERT_TRUE(r.server) << r.error;
  auto c = r.client();
  std::set<std::string> listed;
  for (const char* path : {"/api/v1/", "/api/v1"}) {
    auto res = c.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path;
    const auto j = nlohmann::json::parse(res->body);
    EXPECT_EQ(j["api"], "v1");
    listed.clear();
    for (const auto& route : j["routes"]) {
      listed.insert(route["path"].get<std::string>());
      EXPECT_FALSE(route["returns"].get<std::string>().empty());
    }
  }
  // Every route listed is served (no 404), and every /api/v1/ route served is listed.
  for (const auto& path : listed) {
    auto res = c.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_NE(res->status, 404) << path;
  }
  std::set<std::string> served;
  for (const auto& path : r.server->route_paths()) {
    if (path.starts_with("/api/v1/") && path != "/api/v1/") served.insert(path);
  }
  EXPECT_EQ(listed, served);
}

TEST(ServerHttp, ShowsCommandLinesOnlyWhenEnabled) {
  ServerOptions o;
  o.show_cmdline = true;
  Running r(o);
  ASSERT_TRUE(r.server) << r.error;
  auto res = r.client().Get("/api/v1/latest");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("SECRET"), std::string::npos);
}

TEST(ServerHttp, HistoryParametersAreValidated) {
  const auto dir = scratch_dir("http-history");
  store::StoreOptions so;
  so.path = dir + "/h.db";
  {
    auto st = store::HistoryStore::open(so);
    ASSERT_TRUE(st.ok()) << st.error().message;
    std::vector<store::StoredSample> rows;
    for (int i = 0; i < 120; ++i) {
      store::StoredSample s;
      s.t = 1732200000.5 - 119 + i;
      s.values.set(Metric::SmActive, 42);
      s.state = "compute_bound";
      rows.push_back(s);
    }
    ASSERT_TRUE(st->write(rows, {}).ok());
  }
  Running r({}, so.path);
  ASSERT_TRUE(r.server) << r.error;
  auto c = r.client();
  auto ok = c.Get("/api/v1/history?from=-1m&step=10s&metrics=sm_active&gpu=0");
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, 200) << ok->body;
  const auto j = nlohmann::json::parse(ok->body);
  EXPECT_EQ(j["series"][0]["metrics"]["sm_active"]["mean"][0], 42.0);
  auto timeline = c.Get("/api/v1/timeline?from=-5m");
  ASSERT_TRUE(timeline);
  EXPECT_EQ(timeline->status, 200);
  EXPECT_NE(timeline->body.find("compute_bound"), std::string::npos);
  for (const char* bad :
       {"/api/v1/history?from=yesterday", "/api/v1/history?step=0", "/api/v1/history?metrics=nope",
        "/api/v1/history?gpu=-1", "/api/v1/history?from=-1h&to=-2h", "/api/v1/history?from=-200d",
        "/api/v1/alerts?limit=0", "/api/v1/timeline?to=abc"}) {
    auto res = c.Get(bad);
    ASSERT_TRUE(res) << bad;
    EXPECT_EQ(res->status, 400) << bad << ": " << res->body;
    EXPECT_TRUE(nlohmann::json::accept(res->body)) << bad;
  }
}

}  // namespace
}  // namespace gpulens::exposition
