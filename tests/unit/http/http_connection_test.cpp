// SPDX-License-Identifier: Apache-2.0
// The connection loop on its own (src/http/http_connection.hpp), over a socket
// pair: what reaches the handler, how answers are framed on a kept-alive
// connection, and a handler that throws.
#include "http/http_connection.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace gpulens::http {
namespace {

using namespace std::chrono_literals;

struct Served {
  std::string reply;
  bool linger = false;
};

// Sends `bytes` from the client's end (then closes its writing side), serves the
// connection with `process`, and returns all the server wrote.
Served serve(const std::string& bytes, const ProcessRequest& process) {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  EXPECT_EQ(::write(sv[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::shutdown(sv[1], SHUT_WR);
  ConnectionLimits limits;
  limits.keep_alive_max = 3;
  const std::atomic<int> listening{1};
  PlainTransport transport(sv[0]);
  Served out;
  out.linger = serve_connection(transport, limits, Clock::now() + 5s, listening, process);
  finish_connection(transport, false);
  char buf[4096];
  for (ssize_t n; (n = ::read(sv[1], buf, sizeof buf)) > 0;)
    out.reply.append(buf, static_cast<std::size_t>(n));
  ::close(sv[1]);
  return out;
}

TEST(HttpConnection, PipelinedRequestsReachTheHandlerAndAreFramed) {
  std::vector<std::string> seen;
  const auto served = serve(
      "GET /a?x=1 HTTP/1.1\r\nHost: h\r\n\r\nHEAD /b HTTP/1.1\r\nHost: h\r\n\r\n"
      "GET /c HTTP/1.1\r\nHost: h\r\n\r\nGET /d HTTP/1.1\r\nHost: h\r\n\r\n",
      [&seen](const Request& req, Response& res) {
        seen.push_back(req.method + " " + req.path + " " + req.param("x"));
        res.set_content("body", "text/plain");
      });
  // The connection's third request is its last (keep_alive_max 3): /d never comes.
  EXPECT_EQ(seen, (std::vector<std::string>{"GET /a 1", "HEAD /b ", "GET /c "}));
  EXPECT_EQ(served.reply,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
            "Connection: Keep-Alive\r\nKeep-Alive: timeout=5, max=2\r\n\r\nbody"
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
            "Connection: Keep-Alive\r\nKeep-Alive: timeout=5, max=1\r\n\r\n"
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
            "Connection: close\r\n\r\nbody");
  EXPECT_FALSE(served.linger);
}

TEST(HttpConnection, AHandlerThatThrowsGetsA500AndTheConnectionCloses) {
  int calls = 0;
  const auto served = serve("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n",
                            [&calls](const Request&, Response&) {
                              ++calls;
                              throw 42;  // not even a std::exception
                            });
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(served.reply.starts_with("HTTP/1.1 500 Internal Server Error\r\n")) << served.reply;
  EXPECT_NE(served.reply.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(served.reply.find("HTTP/1.1", 1), std::string::npos) << served.reply;
  EXPECT_TRUE(served.linger);
}

TEST(HttpConnection, ARequestWithABodyIsTheLastOnItsConnection) {
  std::vector<std::string> seen;
  const auto served =
      serve("GET /a HTTP/1.1\r\nContent-Length: 31\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n",
            [&seen](const Request& req, Response&) { seen.push_back(req.path); });
  EXPECT_EQ(seen, std::vector<std::string>{"/a"});
  EXPECT_NE(served.reply.find("Connection: close\r\n"), std::string::npos) << served.reply;
}

TEST(HttpDeadline, CheckHeadMeasuresLinesWithTheirLineEnds) {
  const std::string line = "GET / HTTP/1.1\r\n";
  EXPECT_EQ(check_head(line + "\r\n"), HeadVerdict::Ok);
  EXPECT_EQ(check_head(line + "X: " + std::string(8187, 'a') + "\r\n\r\n"), HeadVerdict::Ok);
  EXPECT_EQ(check_head(line + "X: " + std::string(8188, 'a') + "\r\n\r\n"),
            HeadVerdict::FieldsTooLarge);
  EXPECT_EQ(check_head("GET /" + std::string(8176, 'a') + " HTTP/1.1\r\n\r\n"), HeadVerdict::Ok);
  EXPECT_EQ(check_head("GET /" + std::string(8177, 'a') + " HTTP/1.1\r\n\r\n"),
            HeadVerdict::UriTooLong);
}

}  // namespace
}  // namespace gpulens::http
