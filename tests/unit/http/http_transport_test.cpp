// SPDX-License-Identifier: Apache-2.0
// One connection's bytes (src/http/http_transport.cpp) over a socket pair: plain
// reads and writes, what they return when the peer closes or the time given is
// up, and TLS driven step by step as the connection gate drives it. No test
// waits on a clock: a deadline already passed is what times out.
#include "http/http_transport.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "server_support.hpp"
#include "tls_pair.hpp"

namespace gpulens::http {
namespace {

// A socket pair, closed at the end of the test.
struct TransportPair {
  TransportPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~TransportPair() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  void close_peer() {
    ::close(fd[1]);
    fd[1] = -1;
  }
  int fd[2] = {-1, -1};
};

Clock::time_point transport_later() {
  return Clock::now() + std::chrono::seconds(30);  // a bound that is never reached
}

TEST(HttpTransport, PlainBytesPassBothWays) {
  TransportPair pair;
  PlainTransport t(pair.fd[0]);
  EXPECT_NE(::fcntl(pair.fd[0], F_GETFL, 0) & O_NONBLOCK, 0) << "waits must end at a time given";
  EXPECT_EQ(t.fd(), pair.fd[0]);
  ASSERT_EQ(::send(pair.fd[1], "hello", 5, 0), 5);
  char buf[16];
  ASSERT_EQ(t.read_some(buf, sizeof buf, transport_later()), 5);
  EXPECT_EQ(std::string(buf, 5), "hello");
  ASSERT_EQ(t.write_some("abc", 3, transport_later()), 3);
  ASSERT_EQ(::recv(pair.fd[1], buf, sizeof buf, 0), 3);
  EXPECT_EQ(std::string(buf, 3), "abc");
  EXPECT_FALSE(t.has_pending());
}

TEST(HttpTransport, NothingToReadByAPassedDeadlineTimesOut) {
  TransportPair pair;
  PlainTransport t(pair.fd[0]);
  char buf[16];
  EXPECT_EQ(t.read_some(buf, sizeof buf, Clock::now()), kTimedOut);
  EXPECT_EQ(wait_fd(pair.fd[0], POLLIN, Clock::now()), 0);
  ASSERT_EQ(::send(pair.fd[1], "x", 1, 0), 1);
  EXPECT_GT(wait_fd(pair.fd[0], POLLIN, transport_later()), 0);
  // Bytes already there are read whatever the deadline.
  EXPECT_EQ(t.read_some(buf, sizeof buf, Clock::now()), 1);
}

TEST(HttpTransport, APeerGoneReadsClosedAndWritesFail) {
  TransportPair pair;
  PlainTransport t(pair.fd[0]);
  pair.close_peer();
  char buf[16];
  EXPECT_EQ(t.read_some(buf, sizeof buf, transport_later()), kPeerClosed);
  // No SIGPIPE: the write says so instead of ending the process.
  EXPECT_EQ(t.write_some("abc", 3, transport_later()), kIoError);
}

class HttpTransportTls : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto files = gpulens::testing::self_signed_pair(
        gpulens::testing::scratch_dir("http-transport-tls"), "transport");
    if (!files)
      FAIL() << "the openssl command made no certificate (scripts/setup.sh --tests installs it)";
    server_ctx_ = gpulens::testing::server_context(*files);
    client_ctx_ = SSL_CTX_new(TLS_client_method());
  }
  void TearDown() override {
    SSL_CTX_free(server_ctx_);
    SSL_CTX_free(client_ctx_);
  }
  SSL_CTX* server_ctx_ = nullptr;
  SSL_CTX* client_ctx_ = nullptr;
};

TEST_F(HttpTransportTls, TheHandshakeWaitsForTheClientThenBytesPass) {
  gpulens::testing::TlsPair pair(server_ctx_, client_ctx_);
  // Nothing from the client yet: the step asks to be called again when readable.
  EXPECT_EQ(pair.server->handshake_step(), TlsTransport::Handshake::WantRead);
  ASSERT_TRUE(pair.handshake());
  EXPECT_EQ(pair.server->handshake_step(), TlsTransport::Handshake::Done);

  ASSERT_EQ(SSL_write(pair.client, "ping-pong", 9), 9);
  char buf[16];
  // A short read leaves the rest of the record decrypted and pending.
  ASSERT_EQ(pair.server->read_some(buf, 4, transport_later()), 4);
  EXPECT_EQ(std::string(buf, 4), "ping");
  EXPECT_TRUE(pair.server->has_pending());
  ASSERT_EQ(pair.server->read_some(buf, sizeof buf, transport_later()), 5);
  EXPECT_EQ(std::string(buf, 5), "-pong");
  EXPECT_FALSE(pair.server->has_pending());
  EXPECT_EQ(pair.server->read_some(buf, sizeof buf, Clock::now()), kTimedOut);

  ASSERT_EQ(pair.server->write_some("answer", 6, transport_later()), 6);
  ASSERT_EQ(SSL_read(pair.client, buf, sizeof buf), 6);
  EXPECT_EQ(std::string(buf, 6), "answer");
  // Goodbye is TLS's close_notify: the client reads the end of the session.
  pair.server->say_goodbye();
  EXPECT_EQ(SSL_read(pair.client, buf, sizeof buf), 0);
  EXPECT_EQ(SSL_get_error(pair.client, 0), SSL_ERROR_ZERO_RETURN);
}

TEST_F(HttpTransportTls, TheClientsCloseNotifyReadsAsClosed) {
  gpulens::testing::TlsPair pair(server_ctx_, client_ctx_);
  ASSERT_TRUE(pair.handshake());
  SSL_shutdown(pair.client);
  char buf[16];
  EXPECT_EQ(pair.server->read_some(buf, sizeof buf, transport_later()), kPeerClosed);
}

TEST_F(HttpTransportTls, PlainHttpToTheTlsPortFailsTheHandshakeForGood) {
  gpulens::testing::TlsPair pair(server_ctx_, client_ctx_);
  const std::string get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(pair.client_fd(), get.data(), get.size(), 0), static_cast<ssize_t>(get.size()));
  EXPECT_EQ(pair.server->handshake_step(), TlsTransport::Handshake::Failed);
  EXPECT_EQ(pair.server->handshake_step(), TlsTransport::Handshake::Failed);
  char buf[16];
  EXPECT_EQ(pair.server->read_some(buf, sizeof buf, transport_later()), kIoError);
}

TEST(HttpTransport, TlsWithoutAContextNeverHandshakes) {
  TransportPair pair;
  TlsTransport t(pair.fd[0], nullptr);
  EXPECT_EQ(t.ssl(), nullptr);
  EXPECT_EQ(t.handshake_step(), TlsTransport::Handshake::Failed);
  EXPECT_FALSE(t.has_pending());
}

}  // namespace
}  // namespace gpulens::http
