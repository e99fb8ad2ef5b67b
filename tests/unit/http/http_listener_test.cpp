// SPDX-License-Identifier: Apache-2.0
// The listening socket (src/http/http_listener.cpp) without the agent around it:
// the port it binds, what a port in use says, serving until stop(), a stop that
// comes before listen(), and TLS switched on by its setup. Running out of
// descriptors is hardening_test.cpp (HardenedFiles), in a child process.
#include "http/http_listener.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <thread>

#include "http_test_client.hpp"
#include "server_support.hpp"
#include "tls_pair.hpp"

namespace gpulens::http {
namespace {

void echo_path(const Request& req, Response& res) {
  res.set_content("at " + req.path, "text/plain");
}

// listen() on a thread of its own, stopped and joined at the end.
struct ListeningThread {
  explicit ListeningThread(HttpListener& l) : listener(l), thread([&l] { l.listen(); }) {}
  ~ListeningThread() {
    listener.stop();
    thread.join();
  }
  HttpListener& listener;
  std::thread thread;
};

TEST(HttpListener, ServesOnThePortTheKernelPicksUntilStopped) {
  HttpListener listener(ConnectionLimits{}, 2, echo_path);
  const int port = listener.bind("127.0.0.1", 0);
  ASSERT_GT(port, 0) << std::strerror(errno);
  {
    const ListeningThread running(listener);
    gpulens::testing::TestClient c("127.0.0.1", port);
    c.set_read_timeout(5, 0);
    for (const char* path : {"/one", "/two"}) {  // kept alive between the two
      auto res = c.Get(path);
      ASSERT_TRUE(res) << path;
      EXPECT_EQ(res->status, 200);
      EXPECT_EQ(res->body, std::string("at ") + path);
    }
  }  // stop() ended listen(): the thread was joined
}

TEST(HttpListener, APortInUseIsRefusedWithItsErrno) {
  HttpListener first(ConnectionLimits{}, 1, echo_path);
  const int port = first.bind("127.0.0.1", 0);
  ASSERT_GT(port, 0);
  HttpListener second(ConnectionLimits{}, 1, echo_path);
  errno = 0;
  EXPECT_EQ(second.bind("127.0.0.1", port), -1);
  EXPECT_EQ(errno, EADDRINUSE);
  // Neither listens: listen() without a bound socket returns at once.
  second.listen();
}

// A stop that comes before listen() (a signal during start-up) is not lost.
TEST(HttpListener, AStopBeforeListenEndsItAtOnce) {
  HttpListener listener(ConnectionLimits{}, 1, echo_path);
  ASSERT_GT(listener.bind("127.0.0.1", 0), 0);
  listener.stop();
  listener.listen();  // returns: a lost stop would hang the test here
}

TEST(HttpListener, TlsIsServedWhenItsSetupSucceeds) {
  HttpListener refused(ConnectionLimits{}, 1, echo_path);
  EXPECT_FALSE(refused.enable_tls([](SSL_CTX&) { return false; }));

  const auto files = gpulens::testing::self_signed_pair(
      gpulens::testing::scratch_dir("http-listener-tls"), "listener");
  if (!files)
    FAIL() << "the openssl command made no certificate (scripts/setup.sh --tests installs it)";
  HttpListener listener(ConnectionLimits{}, 1, echo_path);
  ASSERT_TRUE(listener.enable_tls([&](SSL_CTX& ctx) {
    return SSL_CTX_use_certificate_chain_file(&ctx, files->cert.c_str()) == 1 &&
           SSL_CTX_use_PrivateKey_file(&ctx, files->key.c_str(), SSL_FILETYPE_PEM) == 1;
  }));
  const int port = listener.bind("127.0.0.1", 0);
  ASSERT_GT(port, 0);
  const ListeningThread running(listener);
  gpulens::testing::TestClient tls("127.0.0.1", port, true);
  tls.set_read_timeout(5, 0);
  auto res = tls.Get("/secure");
  ASSERT_TRUE(res) << "HTTPS request failed";
  EXPECT_EQ(res->body, "at /secure");
  gpulens::testing::TestClient plain("127.0.0.1", port);
  plain.set_read_timeout(5, 0);
  EXPECT_FALSE(plain.Get("/secure")) << "plain HTTP was answered on the TLS port";
}

}  // namespace
}  // namespace gpulens::http
