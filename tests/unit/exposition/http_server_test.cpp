// SPDX-License-Identifier: Apache-2.0
// The agent's HTTP server (src/exposition/http_server.cpp): listen addresses,
// a port in use, what it refuses, Basic auth and TLS from the web config. What
// each path answers: routes_test.cpp, routes_api_test.cpp, api_slurm_test.cpp.
#include "exposition/http_server.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "http_test_client.hpp"
#include "server_support.hpp"

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
  if (!web_config)
    FAIL() << "the openssl command made no certificate (scripts/setup.sh --tests installs it)";
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
