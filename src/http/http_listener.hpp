// SPDX-License-Identifier: Apache-2.0
#pragma once
// The listening socket and what happens to each connection it accepts: every
// connection, plain or TLS, goes to a ConnectionGate, whose epoll thread drives
// TLS handshakes and waits for complete request heads, and whose workers answer
// them. Out of descriptors, the gate gives up its longest-waiting connection so
// that a new one (a scrape) can be accepted.
#include <openssl/ssl.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "http/connection_gate.hpp"
#include "http/http_connection.hpp"

namespace gpulens::http {

class HttpListener {
 public:
  HttpListener(ConnectionLimits limits, std::size_t workers, ProcessRequest process);
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Serves TLS with a new server context that `setup` configures; false when
  // OpenSSL or `setup` fails. Before bind().
  bool enable_tls(const std::function<bool(SSL_CTX&)>& setup);

  // Binds and listens on host:port (port 0: one the kernel picks). The port,
  // or -1 with errno set.
  int bind(const std::string& host, int port);

  // Accepts connections until stop(); returns at once when stop() came first.
  void listen();
  // From any thread (a signal handler's thread included): ends listen() and
  // every connection's wait for a next request.
  void stop();

 private:
  ConnectionLimits limits_;
  std::size_t workers_;
  ProcessRequest process_;
  SSL_CTX* ssl_ctx_ = nullptr;
  int socket_ = -1;
  int wake_fd_ = -1;
  // The listening socket while listen() runs, -1 once stopped: the connection
  // loops watch it to end their waits.
  std::atomic<int> listening_{0};
  std::atomic<bool> stop_requested_{false};
  std::unique_ptr<ConnectionGate> gate_;
  int reserve_fd_ = -1;  // a spare descriptor for when accept() finds none (EMFILE)

  // accept() failed with EMFILE or ENFILE.
  void out_of_descriptors();
};

}  // namespace gpulens::http
