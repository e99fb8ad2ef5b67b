// SPDX-License-Identifier: Apache-2.0
#pragma once
// TLS without a server: self-signed certificates made with the openssl command,
// and a server-side TlsTransport over one end of a socket pair with an OpenSSL
// client on the other, for the tests of src/http's transport and identity.
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "http/http_transport.hpp"

namespace gpulens::testing {

struct TlsFiles {
  std::string cert;
  std::string key;
};

// A new RSA key and a self-signed certificate for it in `dir` as
// `name`.crt and `name`.key; nullopt when the openssl command is not installed.
inline std::optional<TlsFiles> self_signed_pair(const std::string& dir, const std::string& name) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) return std::nullopt;
  TlsFiles files{dir + "/" + name + ".crt", dir + "/" + name + ".key"};
  const std::string make = "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=" + name +
                           " -keyout '" + files.key + "' -out '" + files.cert + "' >/dev/null 2>&1";
  EXPECT_EQ(std::system(make.c_str()), 0);
  return files;
}

// The first certificate of a PEM file (to be freed with X509_free), or null.
inline X509* read_certificate(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return nullptr;
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  return cert;
}

// A server transport over a socket pair and a blocking OpenSSL client on the
// other end. handshake() drives the server's steps as the gate would, waiting
// for the socket between them, while the client connects on a thread.
class TlsPair {
 public:
  TlsPair(SSL_CTX* server_ctx, SSL_CTX* client_ctx) {
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    server = std::make_unique<http::TlsTransport>(fds_[0], server_ctx);
    client = SSL_new(client_ctx);
    SSL_set_fd(client, fds_[1]);
  }
  ~TlsPair() {
    server.reset();
    SSL_free(client);
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  TlsPair(const TlsPair&) = delete;
  TlsPair& operator=(const TlsPair&) = delete;

  // True when both ends completed the handshake. A failed server step closes
  // the server's end so that the client's connect returns too.
  bool handshake() {
    bool client_ok = false;
    std::thread connecting([&] { client_ok = SSL_connect(client) == 1; });
    using http::TlsTransport;
    TlsTransport::Handshake step = server->handshake_step();
    const auto until = http::Clock::now() + std::chrono::seconds(30);  // a bound, not a measure
    while (step == TlsTransport::Handshake::WantRead ||
           step == TlsTransport::Handshake::WantWrite) {
      const short events = step == TlsTransport::Handshake::WantRead ? POLLIN : POLLOUT;
      if (http::wait_fd(fds_[0], events, until) <= 0) break;
      step = server->handshake_step();
    }
    if (step != TlsTransport::Handshake::Done) ::shutdown(fds_[0], SHUT_RDWR);
    connecting.join();
    return step == TlsTransport::Handshake::Done && client_ok;
  }

  int server_fd() const { return fds_[0]; }
  int client_fd() const { return fds_[1]; }

  std::unique_ptr<http::TlsTransport> server;
  SSL* client = nullptr;

 private:
  int fds_[2] = {-1, -1};
};

// A server context that serves `files` (read from disk by OpenSSL itself).
inline SSL_CTX* server_context(const TlsFiles& files) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  EXPECT_EQ(SSL_CTX_use_certificate_chain_file(ctx, files.cert.c_str()), 1);
  EXPECT_EQ(SSL_CTX_use_PrivateKey_file(ctx, files.key.c_str(), SSL_FILETYPE_PEM), 1);
  return ctx;
}

}  // namespace gpulens::testing
