// SPDX-License-Identifier: Apache-2.0
#pragma once
// One accepted connection's bytes, plain or TLS. The descriptor is made
// non-blocking so that every wait ends at a time the caller gives: a peer that
// sends or reads one byte at a time cannot stretch a read or write past it.
#include <openssl/ssl.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>

namespace gpulens::http {

using Clock = std::chrono::steady_clock;

// Waits until `fd` is ready for `events` (POLLIN, POLLOUT) or `until` passes:
// > 0 ready (or closed, or failed: the next call says which), 0 time is up, < 0 error.
int wait_fd(int fd, short events, Clock::time_point until);

// What read_some and write_some return besides a byte count (> 0).
inline constexpr ssize_t kPeerClosed = 0;
inline constexpr ssize_t kIoError = -1;
inline constexpr ssize_t kTimedOut = -2;

class Transport {
 public:
  explicit Transport(int fd);
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Some bytes (> 0), kPeerClosed, kIoError, or kTimedOut once `until` passed.
  virtual ssize_t read_some(char* buf, std::size_t n, Clock::time_point until) = 0;
  virtual ssize_t write_some(const char* buf, std::size_t n, Clock::time_point until) = 0;
  // Bytes received and decrypted but not read yet (TLS records already taken in).
  virtual bool has_pending() const { return false; }
  // Ends the session the protocol's way where it has one (TLS close_notify).
  virtual void say_goodbye() {}
  int fd() const { return fd_; }

 protected:
  int fd_;
};

class PlainTransport final : public Transport {
 public:
  using Transport::Transport;
  ssize_t read_some(char* buf, std::size_t n, Clock::time_point until) override;
  ssize_t write_some(const char* buf, std::size_t n, Clock::time_point until) override;
};

class TlsTransport final : public Transport {
 public:
  TlsTransport(int fd, SSL_CTX* ctx);
  ~TlsTransport() override;

  // One non-blocking step of the handshake, taken when the socket is ready:
  // the connection gate drives it with epoll, so a client that connects and
  // stops (or sends half a ClientHello) holds no thread while it waits.
  enum class Handshake { Done, WantRead, WantWrite, Failed };
  Handshake handshake_step();
  SSL* ssl() const { return ssl_; }

  ssize_t read_some(char* buf, std::size_t n, Clock::time_point until) override;
  ssize_t write_some(const char* buf, std::size_t n, Clock::time_point until) override;
  bool has_pending() const override;
  void say_goodbye() override;

 private:
  // Waits for what OpenSSL asked for after a call that returned `ret`; false
  // when the session failed (it is then never used again) or time ran out.
  ssize_t retry_or_fail(int ret, Clock::time_point until);

  SSL* ssl_ = nullptr;
  bool established_ = false;
  bool broken_ = false;  // a fatal error or an abandoned write: no close_notify then
};

}  // namespace gpulens::http
