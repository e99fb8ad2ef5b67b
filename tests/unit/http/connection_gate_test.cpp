// SPDX-License-Identifier: Apache-2.0
// The connection gate (src/http/connection_gate.cpp) in the running server: a
// total deadline per request while connections wait in it (slow clients and
// stalled TLS handshakes are cut off, keep-alive connections are not),
// pipelined requests in order, and the answers to requests that break a limit
// before they reach a worker. check_head itself: http_connection_test.cpp.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <thread>

#include "exposition/http_server.hpp"
#include "http/http_connection.hpp"
#include "http_test_client.hpp"
#include "server_support.hpp"

namespace gpulens::http {
namespace {

using namespace std::chrono_literals;
using Seconds = std::chrono::duration<double>;

// A server with a 1 s request deadline unless the test sets another.
class Server : public gpulens::testing::RunningServer {
 public:
  explicit Server(exposition::ServerOptions options = {})
      : RunningServer(with_short_deadline(std::move(options))) {}

 private:
  static exposition::ServerOptions with_short_deadline(exposition::ServerOptions options) {
    if (options.request_timeout == exposition::ServerOptions{}.request_timeout)
      options.request_timeout = 1s;
    return options;
  }
};

int connect_to(int port) {
  return gpulens::testing::connect_loopback(port, 3);
}

void send_all(int fd, const std::string& bytes) {
  for (std::size_t done = 0; done < bytes.size();) {
    const auto n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// Everything the server sends until it closes (or 3 s pass without a byte).
std::string read_to_end(int fd) {
  std::string out;
  char buf[4096];
  while (true) {
    const auto n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

// Sends `bytes`, half-closes, and returns the whole reply.
std::string exchange(int port, const std::string& bytes) {
  const int fd = connect_to(port);
  if (fd < 0) return "";
  send_all(fd, bytes);
  shutdown(fd, SHUT_WR);
  auto reply = read_to_end(fd);
  close(fd);
  return reply;
}

// One answer on a kept-alive connection: the head, then Content-Length bytes.
std::string read_answer(int fd) {
  std::string out;
  char c;
  while (out.find("\r\n\r\n") == std::string::npos && recv(fd, &c, 1, 0) == 1) out += c;
  const auto at = out.find("Content-Length: ");
  if (at == std::string::npos) return out;
  std::size_t left = std::strtoul(out.c_str() + at + 16, nullptr, 10);
  char buf[4096];
  while (left > 0) {
    const auto n = recv(fd, buf, std::min(left, sizeof buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    left -= static_cast<std::size_t>(n);
  }
  return out;
}

struct CutOff {
  double after_s = -1;  // when the server ended the connection; -1: it never did
  std::string reply;
};

// Sends `start`, then one byte of `drip` every 100 ms, for at most 5 s, and
// notes when the server answers or closes.
CutOff dribble(int port, const std::string& start, char drip) {
  CutOff out;
  const int fd = connect_to(port);
  if (fd < 0) return out;
  send_all(fd, start);
  const auto t0 = std::chrono::steady_clock::now();
  // 30 s: far beyond the 1 s deadline, so that a loaded machine never mistakes a
  // late cut-off for none (the bounds below sit halfway, at 15 s).
  while (std::chrono::steady_clock::now() - t0 < 30s) {
    pollfd p{fd, POLLIN, 0};
    const bool answered = poll(&p, 1, 100) > 0;
    if (answered || send(fd, &drip, 1, MSG_NOSIGNAL) != 1) {
      out.after_s = Seconds(std::chrono::steady_clock::now() - t0).count();
      if (answered) out.reply = read_to_end(fd);
      break;
    }
  }
  close(fd);
  return out;
}

TEST(HttpDeadline, DribblingClientsAreCutOffWhileOthersAreServed) {
  exposition::ServerOptions o;
  o.threads = 2;
  Server s(o);
  ASSERT_TRUE(s.server) << s.error;
  // Two clients take both workers, each sending a header a byte at a time:
  // every read succeeds long before the 5 s read timeout.
  const std::string start = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  auto slow1 = std::async(std::launch::async, [&] { return dribble(s.port(), start, 'a'); });
  auto slow2 = std::async(std::launch::async, [&] { return dribble(s.port(), start, 'a'); });
  std::this_thread::sleep_for(300ms);

  // A normal request waits for a worker, which the deadline frees.
  const auto t0 = std::chrono::steady_clock::now();
  gpulens::testing::TestClient c("127.0.0.1", s.port());
  c.set_read_timeout(8, 0);
  auto res = c.Get("/api/v1/version");
  const double took = Seconds(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(res) << "no answer while slow clients hold the workers";
  EXPECT_EQ(res->status, 200);
  // Without the deadline it waits until the slow clients give up (30 s).
  EXPECT_LT(took, 15.0) << "the workers were not freed at the 1 s deadline";

  for (auto* slow : {&slow1, &slow2}) {
    const CutOff cut = slow->get();
    EXPECT_GE(cut.after_s, 0.7) << "cut off before its deadline";
    EXPECT_LE(cut.after_s, 15.0) << "not cut off at its 1 s deadline";
    EXPECT_TRUE(cut.reply.starts_with("HTTP/1.1 408 Request Timeout\r\n")) << cut.reply;
    EXPECT_NE(cut.reply.find("Connection: close\r\n"), std::string::npos);
    EXPECT_NE(cut.reply.find("X-Content-Type-Options: nosniff\r\n"), std::string::npos);
  }
  // Counted as answers no handler gave.
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("gpulens_http_requests_total{handler=\"other\",code=\"408\"} 2\n"),
            std::string::npos);
}

TEST(HttpDeadline, KeepAliveConnectionsOutliveTheDeadline) {
  Server s;
  ASSERT_TRUE(s.server) << s.error;
  const int fd = connect_to(s.port());
  ASSERT_GE(fd, 0);
  // Three requests on one connection over 1.5 s: the deadline is per request.
  for (int i = 0; i < 3; ++i) {
    if (i > 0) std::this_thread::sleep_for(600ms);
    send_all(fd, "GET /api/v1/version HTTP/1.1\r\nHost: x\r\n\r\n");
    const auto answer = read_answer(fd);
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << "request " << i << ": " << answer;
    EXPECT_NE(answer.find("\"api\":\"v1\""), std::string::npos) << answer;
  }
  close(fd);
}

TEST(HttpDeadline, PipelinedRequestsAreAnsweredInOrder) {
  Server s;
  ASSERT_TRUE(s.server) << s.error;
  const auto reply =
      exchange(s.port(),
               "GET /api/v1/version HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET /api/v1/nope HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET /api/v1/version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const auto first = reply.find("HTTP/1.1 200");
  const auto second = reply.find("HTTP/1.1 404");
  const auto third = reply.find("HTTP/1.1 200", first + 1);
  EXPECT_EQ(first, 0u) << reply;
  EXPECT_LT(first, second);
  EXPECT_NE(third, std::string::npos) << reply;
  EXPECT_LT(second, third);
}

TEST(HttpDeadline, OversizedHeadsGetAStatus) {
  Server s;
  ASSERT_TRUE(s.server) << s.error;
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
  // Header bytes beyond the 32 KiB bound, in one line or in many.
  EXPECT_TRUE(exchange(s.port(), get + "X: " + std::string(100000, 'b') + "\r\n\r\n")
                  .starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
  std::string many = get;
  for (int i = 0; i < 600; ++i)
    many += "X-" + std::to_string(i) + ": " + std::string(60, 'c') + "\r\n";
  const auto reply = exchange(s.port(), many + "\r\n");
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 431 ")) << reply.substr(0, 200);
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos);
  // One header line longer than 8 KiB, the head within bounds.
  EXPECT_TRUE(exchange(s.port(), get + "X: " + std::string(9000, 'b') + "\r\n\r\n")
                  .starts_with("HTTP/1.1 431 "));
  // A head that never ends, from a client that stops sending: still an answer.
  const int fd = connect_to(s.port());
  ASSERT_GE(fd, 0);
  send_all(fd, get + "X: " + std::string(40000, 'b'));
  EXPECT_TRUE(read_to_end(fd).starts_with("HTTP/1.1 431 "));
  close(fd);
  // Request lines: longer than 8 KiB, and too long for the whole bound.
  EXPECT_TRUE(exchange(s.port(), "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n")
                  .starts_with("HTTP/1.1 414 "));
  EXPECT_TRUE(exchange(s.port(), "GET /" + std::string(50000, 'a') + " HTTP/1.1\r\n\r\n")
                  .starts_with("HTTP/1.1 414 URI Too Long\r\n"));
  // Within the bounds all is well.
  EXPECT_TRUE(exchange(s.port(), get + "X: " + std::string(8000, 'b') + "\r\n\r\n")
                  .starts_with("HTTP/1.1 200 OK\r\n"));
  // Malformed but small: a 400, and the connection closes.
  const auto bad = exchange(s.port(), "\x16\x03\x01garbage\r\n\r\nGET / HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(bad.starts_with("HTTP/1.1 400 ")) << bad;
  EXPECT_EQ(bad.find("HTTP/1.1", 1), std::string::npos) << "answered after a 400: " << bad;
}

TEST(HttpDeadline, BodiesAreBoundedAndNeverReadAsRequests) {
  Server s;
  ASSERT_TRUE(s.server) << s.error;
  const auto large =
      exchange(s.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" +
                             std::string(5000, 'x'));
  EXPECT_TRUE(large.starts_with("HTTP/1.1 413 ")) << large.substr(0, 200);
  EXPECT_NE(large.find("Connection: close\r\n"), std::string::npos);
  const auto huge = exchange(
      s.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\nxx");
  EXPECT_TRUE(huge.starts_with("HTTP/1.1 413 ")) << huge.substr(0, 200);
  EXPECT_TRUE(exchange(s.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: x1\r\n\r\n")
                  .starts_with("HTTP/1.1 400 "));
  // A small body that looks like a request is answered as nothing but a body:
  // one answer, then the connection closes.
  const auto smuggled =
      exchange(s.port(),
               "GET /api/v1/version HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n"
               "GET /api/v1/devices HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(smuggled.starts_with("HTTP/1.1 200 OK\r\n")) << smuggled;
  EXPECT_EQ(smuggled.find("HTTP/1.1", 1), std::string::npos) << smuggled;
  EXPECT_EQ(smuggled.find("\"gpus\""), std::string::npos) << "the body was served as a request";
}

TEST(HttpDeadline, StalledTlsHandshakeIsCutOff) {
  const auto web_config =
      gpulens::testing::self_signed_web_config(gpulens::testing::scratch_dir("http-deadline-tls"));
  if (!web_config)
    FAIL() << "the openssl command made no certificate (scripts/setup.sh --tests installs it)";
  exposition::ServerOptions o;
  o.web_config = *web_config;
  Server s(o);
  ASSERT_TRUE(s.server) << s.error;
  // A handshake record announcing 512 bytes, then one byte at a time.
  const CutOff cut = dribble(s.port(), std::string("\x16\x03\x01\x02\x00", 5), '\x01');
  EXPECT_GE(cut.after_s, 0.7);
  EXPECT_LE(cut.after_s, 15.0) << "the handshake outlived the 1 s deadline";
  // HTTPS still works, on a keep-alive connection across the deadline too.
  gpulens::testing::TestClient tls("127.0.0.1", s.port(), true);
  for (int i = 0; i < 2; ++i) {
    if (i > 0) std::this_thread::sleep_for(1200ms);
    auto res = tls.Get("/api/v1/version");
    ASSERT_TRUE(res) << "HTTPS request " << i << " failed";
    EXPECT_EQ(res->status, 200);
  }
}

}  // namespace
}  // namespace gpulens::http
