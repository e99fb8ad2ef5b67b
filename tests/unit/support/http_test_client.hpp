// SPDX-License-Identifier: Apache-2.0
#pragma once
// A small HTTP/1.1 client for the server tests, over a plain socket or TLS
// (OpenSSL, certificates not verified: the tests' own are self-signed). It
// speaks only what the tests need: one request at a time, Content-Length
// framed answers, keep-alive on request. Written here, not borrowed from a
// library, so that the tests check the server against bytes they can read.
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "http/http_message.hpp"

namespace gpulens::testing {

struct TestResponse {
  int status = 0;
  http::HeaderFields headers;
  std::string body;
  std::string get_header_value(std::string_view name) const {
    http::Response r;
    r.headers = headers;
    return r.header(name);
  }
};

class TestClient {
 public:
  TestClient(std::string host, int port, bool tls = false)
      : host_(std::move(host)), port_(port), tls_(tls) {}
  TestClient(TestClient&&) = default;
  TestClient& operator=(TestClient&&) = default;
  ~TestClient() { disconnect(); }

  void set_read_timeout(int seconds, int /*microseconds*/) { timeout_s_ = seconds; }
  void set_keep_alive(bool on) { keep_alive_ = on; }
  void set_basic_auth(const std::string& user, const std::string& password) {
    authorization_ = "Basic " + base64(user + ":" + password);
  }

  std::optional<TestResponse> Get(const std::string& path) { return send("GET", path); }
  std::optional<TestResponse> Head(const std::string& path) { return send("HEAD", path); }
  std::optional<TestResponse> Delete(const std::string& path) { return send("DELETE", path); }
  std::optional<TestResponse> Post(const std::string& path, const std::string& body,
                                   const std::string& type) {
    return send("POST", path, body, type);
  }

  std::optional<TestResponse> send(const std::string& method, const std::string& path,
                                   const std::string& body = "", const std::string& type = "") {
    if (!conn_ && !connect()) return std::nullopt;
    std::string text =
        method + " " + path + " HTTP/1.1\r\nHost: " + host_ + ":" + std::to_string(port_) + "\r\n";
    if (!authorization_.empty()) text += "Authorization: " + authorization_ + "\r\n";
    if (!type.empty()) text += "Content-Type: " + type + "\r\n";
    if (!body.empty() || method == "POST")
      text += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    if (!keep_alive_) text += "Connection: close\r\n";
    text += "\r\n" + body;
    auto res = exchange(text, method == "HEAD");
    if (!res || !keep_alive_ || res->get_header_value("Connection") == "close") disconnect();
    return res;
  }

 private:
  struct Connection {
    int fd = -1;
    SSL_CTX* ctx = nullptr;
    SSL* ssl = nullptr;
    std::string pending;  // bytes read past the last answer
    ~Connection() {
      if (ssl != nullptr) SSL_free(ssl);
      if (ctx != nullptr) SSL_CTX_free(ctx);
      if (fd >= 0) ::close(fd);
    }
  };

  static std::string base64(const std::string& in) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (std::size_t i = 0; i < in.size(); i += 3) {
      const std::size_t n = std::min<std::size_t>(3, in.size() - i);
      unsigned v = 0;
      for (std::size_t k = 0; k < 3; ++k)
        v = (v << 8) | (k < n ? static_cast<unsigned char>(in[i + k]) : 0u);
      for (std::size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=';
    }
    return out;
  }

  bool connect() {
    auto c = std::make_unique<Connection>();
    c->fd = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{timeout_s_, 0};
    ::setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(c->fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return false;
    if (tls_) {
      c->ctx = SSL_CTX_new(TLS_client_method());
      c->ssl = c->ctx ? SSL_new(c->ctx) : nullptr;
      if (c->ssl == nullptr || SSL_set_fd(c->ssl, c->fd) != 1 || SSL_connect(c->ssl) != 1)
        return false;
    }
    conn_ = std::move(c);
    return true;
  }

  void disconnect() { conn_.reset(); }

  bool write_all(const std::string& text) {
    for (std::size_t done = 0; done < text.size();) {
      const auto rest = text.size() - done;
      const ssize_t n = conn_->ssl
                            ? SSL_write(conn_->ssl, text.data() + done, static_cast<int>(rest))
                            : ::send(conn_->fd, text.data() + done, rest, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  bool read_more() {
    char buf[16384];
    const ssize_t n =
        conn_->ssl ? SSL_read(conn_->ssl, buf, sizeof buf) : ::recv(conn_->fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    conn_->pending.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  std::optional<TestResponse> exchange(const std::string& text, bool head_only) {
    if (!write_all(text)) return std::nullopt;
    std::string& in = conn_->pending;
    std::size_t end;
    while ((end = in.find("\r\n\r\n")) == std::string::npos) {
      if (!read_more()) return std::nullopt;
    }
    const std::string head = in.substr(0, end + 2);
    in.erase(0, end + 4);
    TestResponse res;
    if (!head.starts_with("HTTP/1.1 ") || head.size() < 12) return std::nullopt;
    res.status = std::atoi(head.c_str() + 9);
    std::size_t at = head.find("\r\n") + 2;
    while (at < head.size()) {
      const auto eol = head.find("\r\n", at);
      const std::string line = head.substr(at, eol - at);
      const auto colon = line.find(':');
      if (colon == std::string::npos) return std::nullopt;
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      res.headers.emplace_back(line.substr(0, colon), value);
      at = eol + 2;
    }
    const std::size_t length =
        head_only ? 0 : std::strtoul(res.get_header_value("Content-Length").c_str(), nullptr, 10);
    while (in.size() < length) {
      if (!read_more()) return std::nullopt;
    }
    res.body = in.substr(0, length);
    in.erase(0, length);
    return res;
  }

  std::string host_;
  int port_;
  bool tls_;
  int timeout_s_ = 5;
  bool keep_alive_ = true;
  std::string authorization_;
  std::unique_ptr<Connection> conn_;
};

// A plain TCP connection to 127.0.0.1:port whose reads give up after `timeout_s`
// without data; -1 when it cannot connect.
inline int connect_loopback(int port, int timeout_s = 5) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends raw bytes on a fresh connection, half-closes it, and returns what comes
// back until the server closes (or `max_bytes`, or 5 s without data): for
// requests the client above would not send (malformed heads, odd framing).
inline std::string raw_exchange(int port, const std::string& bytes,
                                std::size_t max_bytes = std::string::npos) {
  std::string reply;
  const int fd = connect_loopback(port);
  if (fd < 0) return reply;
  (void)!write(fd, bytes.data(), bytes.size());
  shutdown(fd, SHUT_WR);
  char buf[4096];
  for (ssize_t n; reply.size() < max_bytes && (n = read(fd, buf, sizeof buf)) > 0;)
    reply.append(buf, static_cast<std::size_t>(n));
  close(fd);
  if (reply.size() > max_bytes) reply.resize(max_bytes);
  return reply;
}

}  // namespace gpulens::testing
