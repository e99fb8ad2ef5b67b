// SPDX-License-Identifier: Apache-2.0
// Request heads as Beast parses them for the agent, the path and query
// decoding around it, and the answers' heads (src/http/http_message.hpp); then
// HEAD and HTTP/1.0 against the running server.
#include "http/http_message.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_test_client.hpp"
#include "server_support.hpp"

namespace gpulens::http {
namespace {

TEST(HttpMessage, ParsesARequestHead) {
  const auto req = parse_request_head(
      "GET /api/v1/hist%6Fry?from=-1h&metrics=sm_active%2Cdram_active&x=a+b&empty HTTP/1.1\r\n"
      "Host: node-17:9400\r\nauthorization:   Basic YWxpY2U6c2VjcmV0  \r\nX-Twice: 1\r\n"
      "x-twice: 2\r\n\r\n");
  ASSERT_TRUE(req);
  EXPECT_EQ(req->method, "GET");
  EXPECT_EQ(req->path, "/api/v1/history");
  EXPECT_EQ(req->target, "/api/v1/hist%6Fry?from=-1h&metrics=sm_active%2Cdram_active&x=a+b&empty");
  EXPECT_EQ(req->version, 11);
  EXPECT_TRUE(req->keep_alive);
  EXPECT_FALSE(req->has_body);
  EXPECT_EQ(req->param("from"), "-1h");
  EXPECT_EQ(req->param("metrics"), "sm_active,dram_active");
  EXPECT_EQ(req->param("x"), "a b");
  EXPECT_TRUE(req->has_param("empty"));
  EXPECT_FALSE(req->has_param("to"));
  // Names without case, values without the spaces around them.
  EXPECT_EQ(req->header("Authorization"), "Basic YWxpY2U6c2VjcmV0");
  EXPECT_EQ(req->header_count("X-TWICE"), 2u);
  EXPECT_EQ(req->header("x-twice"), "1");
  EXPECT_EQ(req->header("Absent"), "");
}

TEST(HttpMessage, KeepAliveAndBodiesAsTheClientDeclares) {
  const auto old = parse_request_head("GET / HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->version, 10);
  EXPECT_FALSE(old->keep_alive);
  EXPECT_TRUE(parse_request_head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")->keep_alive);
  EXPECT_FALSE(parse_request_head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")->keep_alive);
  EXPECT_TRUE(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\n")->has_body);
  EXPECT_FALSE(parse_request_head("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n")->has_body);
  EXPECT_TRUE(parse_request_head("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")->has_body);
  // A declared length far beyond any limit is still a head: the server answers 413.
  EXPECT_TRUE(parse_request_head("GET / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n"));
}

TEST(HttpMessage, RefusesWhatIsNotAnHttpHead) {
  for (const std::string& bad :
       {std::string("\x16\x03\x01garbage\r\n\r\n"), std::string("GET /\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nNo colon here\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nContent-Length: x1\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nHost: x\r\n"), std::string("")}) {
    EXPECT_FALSE(parse_request_head(bad)) << bad;
  }
}

TEST(HttpMessage, PercentDecoding) {
  EXPECT_EQ(percent_decode("/a%20b+c", false), "/a b+c");
  EXPECT_EQ(percent_decode("a%20b+c", true), "a b c");
  // Malformed escapes stay as they are.
  EXPECT_EQ(percent_decode("100%", false), "100%");
  EXPECT_EQ(percent_decode("%zz%4", false), "%zz%4");
  EXPECT_EQ(percent_decode("%4a%4A", false), "JJ");
  const auto q = parse_query("a=1&&b=&a=2&=x");
  EXPECT_EQ(q.count("a"), 2u);
  EXPECT_EQ(q.find("b")->second, "");
  EXPECT_EQ(q.find("")->second, "x");
}

TEST(HttpMessage, ResponseHeads) {
  Response res;
  res.status = 404;
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("x-content-type-options", "nosniff");  // replaces, whatever the case
  res.set_header("Connection", "close");                // stated once, by response_head
  res.set_content("not found\n", "text/plain; charset=utf-8");
  EXPECT_EQ(response_head(res, true, "timeout=5, max=99"),
            "HTTP/1.1 404 Not Found\r\nx-content-type-options: nosniff\r\n"
            "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 10\r\n"
            "Connection: close\r\n\r\n");
  Response ok;
  ok.body = "{}";
  EXPECT_EQ(response_head(ok, false, "timeout=5, max=99"),
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: Keep-Alive\r\n"
            "Keep-Alive: timeout=5, max=99\r\n\r\n");
  EXPECT_EQ(status_reason(431), "Request Header Fields Too Large");
  EXPECT_EQ(status_reason(299), "Unknown");
  EXPECT_EQ(status_reason(7), "Unknown");
}

TEST(HttpMessage, HeadIsAnsweredAsGetWithoutTheBody) {
  gpulens::testing::RunningServer r({});
  ASSERT_TRUE(r.server) << r.error;
  auto c = r.client();
  const auto get = c.Get("/api/v1/version");
  ASSERT_TRUE(get);
  // Kept alive: a body after the HEAD answer would be read as the next answer.
  const auto head = c.Head("/api/v1/version");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->get_header_value("Content-Length"), std::to_string(get->body.size()));
  EXPECT_EQ(head->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(head->get_header_value("X-Content-Type-Options"), "nosniff");
  const auto again = c.Get("/api/v1/version");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(again->body, get->body);
  const auto missing = c.Head("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST(HttpMessage, ConnectionTermsAndEscapedPaths) {
  gpulens::testing::RunningServer r({});
  ASSERT_TRUE(r.server) << r.error;
  const auto old = gpulens::testing::raw_exchange(r.port(), "GET /api/v1/version HTTP/1.0\r\n\r\n");
  EXPECT_TRUE(old.starts_with("HTTP/1.1 200 OK\r\n")) << old;
  EXPECT_NE(old.find("\r\nConnection: close\r\n"), std::string::npos) << old;
  gpulens::testing::TestClient c("127.0.0.1", r.port());
  const auto res = c.send("GET", "/api/v1/version");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Connection"), "Keep-Alive");
  EXPECT_NE(res->get_header_value("Keep-Alive").find("timeout=5"), std::string::npos);
  // A path with escapes reaches its route.
  const auto escaped = c.Get("/api/v1/%76ersion");
  ASSERT_TRUE(escaped);
  EXPECT_EQ(escaped->status, 200);
}

}  // namespace
}  // namespace gpulens::http
