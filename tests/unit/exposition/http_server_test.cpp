// SPDX-License-Identifier: Apache-2.0
#include "exposition/http_server.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "http_test_client.hpp"
#include "server_support.hpp"
#include "store/history_store.hpp"

namespace gpulens::exposition {
namespace {

using gpulens::testing::fixed_snapshot;
using gpulens::testing::scratch_dir;

// bcrypt of "secret" at cost 10.
constexpr const char* kSecretHash = "$2b$10$abcdefghijklmnopqrstuuqflPDzB6gcMhKa1rZqKiun2YGL5sa2u";

using Running = gpulens::testing::RunningServer;

// Sends raw bytes and returns what came back (at most the first 4 KiB).
std::string raw_request(int port, const std::string& bytes) {
  return gpulens::testing::raw_exchange(port, bytes, 4096);
}

TEST(ServerHttp, ListenAddresses) {
  EXPECT_EQ(parse_listen("127.0.0.1:9401")->second, 9401);
  EXPECT_EQ(parse_listen(":9401")->first, "0.0.0.0");
  EXPECT_EQ(parse_listen("[::1]:9401")->first, "::1");
  EXPECT_FALSE(parse_listen("9401").ok());
  EXPECT_FALSE(parse_listen("host:99999").ok());
  EXPECT_FALSE(parse_listen("host:abc").ok());
}

// A port in use (dcgm-exporter's, another agent's) is refused at start in words
// that name the address and the way out (issue 48), never silently moved.
TEST(ServerHttp, PortInUseIsRefusedInWords) {
  Running first({});
  ASSERT_TRUE(first.server) << first.error;
  ServerOptions options;
  options.listen = "127.0.0.1:" + std::to_string(first.port());
  exposition::ApiContext ctx;
  auto snap = std::make_shared<const agent::LiveSnapshot>(fixed_snapshot());
  ctx.snapshot = [snap] { return snap; };
  ctx.store_status = [] { return std::optional<store::StoreStatus>(); };
  auto second = HttpServer::create(std::move(options), ctx);
  ASSERT_TRUE(second) << second.error().message;
  const auto bound = (*second)->bind();
  ASSERT_FALSE(bound.ok());
  const std::string& why = bound.error().message;
  EXPECT_NE(why.find("cannot listen on 127.0.0.1:" + std::to_string(first.port())),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("in use"), std::string::npos) << why;
  EXPECT_NE(why.find("dcgm-exporter"), std::string::npos) << why;
  EXPECT_NE(why.find("--listen"), std::string::npos) << why;
}

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

TEST(ServerHttp, ReadOnlyAndStrictAboutRequests) {
  Running r({});
  ASSERT_TRUE(r.server) << r.error;
  auto c = r.client();
  auto post = c.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  auto del = c.Delete("/api/v1/latest");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  auto missing = c.Get("/api/v1/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto history = c.Get("/api/v1/history");
  ASSERT_TRUE(history);
  EXPECT_EQ(history->status, 503) << "no history configured";
  EXPECT_NE(history->body.find("history is disabled"), std::string::npos);

  const int port = r.server->port();
  // Malformed or oversized requests get a 4xx. The server may close before it has
  // read every byte sent, and the kernel's reset can then discard the reply before
  // the client reads it, so an empty reply also counts: never a 200, never a crash.
  auto refused = [](const std::string& reply) {
    return reply.empty() || reply.starts_with("HTTP/1.1 4");
  };
  EXPECT_TRUE(refused(raw_request(port, "\x16\x03\x01garbage\r\n\r\n")));
  EXPECT_TRUE(refused(raw_request(port, "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n")));
  EXPECT_TRUE(refused(raw_request(
      port, "GET /metrics HTTP/1.1\r\nHost: x\r\nX: " + std::string(100000, 'b') + "\r\n\r\n")));
  EXPECT_TRUE(refused(raw_request(
      port, "GET /metrics HTTP/1.1\r\nHost: x\r\nX: " + std::string(9000, 'b') + "\r\n\r\n")));
  // Still serving after all that.
  auto after = c.Get("/api/v1/version");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
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

TEST(ServerHttp, BasicAuthFromTheWebConfig) {
  const auto dir = scratch_dir("http-auth");
  std::ofstream(dir + "/web.yml") << "basic_auth_users:\n  alice: " << kSecretHash << "\n";
  ServerOptions o;
  o.web_config = dir + "/web.yml";
  Running r(o);
  ASSERT_TRUE(r.server) << r.error;
  EXPECT_TRUE(r.server->auth());
  auto c = r.client();
  auto none = c.Get("/metrics");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_NE(none->get_header_value("WWW-Authenticate").find("Basic"), std::string::npos);
  c.set_basic_auth("alice", "wrong");
  auto wrong = c.Get("/api/v1/latest");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  c.set_basic_auth("alice", "secret");
  auto right = c.Get("/api/v1/latest");
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200);
}

TEST(ServerHttp, TlsServesHttpsAndRefusesPlainHttp) {
  const auto dir = scratch_dir("http-tls");
  const auto web_config = gpulens::testing::self_signed_web_config(dir);
  if (!web_config) GTEST_SKIP() << "no openssl";
  ServerOptions o;
  o.web_config = *web_config;
  Running r(o);
  ASSERT_TRUE(r.server) << r.error;
  EXPECT_TRUE(r.server->tls());
  gpulens::testing::TestClient tls("127.0.0.1", r.server->port(), true);
  auto ok = tls.Get("/api/v1/version");
  ASSERT_TRUE(ok) << "HTTPS request failed";
  EXPECT_EQ(ok->status, 200);
  auto plain = r.client().Get("/api/v1/version");
  EXPECT_FALSE(plain) << "plain HTTP to the TLS port got an answer: " << plain->status;
  // A certificate that does not match its key is refused with words.
  std::ofstream(dir + "/bad.yml")
      << "tls_server_config:\n  cert_file: tls.crt\n  key_file: web.yml\n";
  ServerOptions bad;
  bad.web_config = dir + "/bad.yml";
  Running b(bad);
  EXPECT_FALSE(b.server);
  EXPECT_NE(b.error.find("no PEM private key"), std::string::npos) << b.error;
}

}  // namespace
}  // namespace gpulens::exposition
