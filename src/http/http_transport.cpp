// SPDX-License-Identifier: Apache-2.0
#include "http/http_transport.hpp"

#include <fcntl.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>

namespace gpulens::http {
namespace {

constexpr ssize_t kRetry = 1;

int clamp_int(std::size_t n) {
  return static_cast<int>(std::min<std::size_t>(n, INT_MAX));
}

// After a failed recv/send: wait and retry, or give up.
ssize_t wait_again(int fd, short events, Clock::time_point until) {
  if (errno == EINTR) return kRetry;
  if (errno != EAGAIN && errno != EWOULDBLOCK) return kIoError;
  const int ready = wait_fd(fd, events, until);
  if (ready > 0) return kRetry;
  return ready == 0 ? kTimedOut : kIoError;
}

}  // namespace

int wait_fd(int fd, short events, Clock::time_point until) {
  pollfd p{fd, events, 0};
  while (true) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) return 0;
    const int ms = static_cast<int>(std::min<std::int64_t>(left.count(), INT_MAX));
    const int r = ::poll(&p, 1, ms);
    if (r >= 0) {
      if (r == 0) continue;  // poll may wake a little early: the loop checks the clock
      return r;
    }
    if (errno != EINTR) return -1;
  }
}

Transport::Transport(int fd) : fd_(fd) {
  const int flags = ::fcntl(fd_, F_GETFL, 0);
  if (flags >= 0) ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
}

ssize_t PlainTransport::read_some(char* buf, std::size_t n, Clock::time_point until) {
  while (true) {
    const ssize_t got = ::recv(fd_, buf, n, 0);
    if (got >= 0) return got;
    const ssize_t next = wait_again(fd_, POLLIN, until);
    if (next != kRetry) return next;
  }
}

ssize_t PlainTransport::write_some(const char* buf, std::size_t n, Clock::time_point until) {
  while (true) {
    // MSG_NOSIGNAL: a peer gone away is an error to report, not a SIGPIPE.
    const ssize_t sent = ::send(fd_, buf, n, MSG_NOSIGNAL);
    if (sent > 0) return sent;
    if (sent == 0) return kIoError;
    const ssize_t next = wait_again(fd_, POLLOUT, until);
    if (next != kRetry) return next;
  }
}

TlsTransport::TlsTransport(int fd, SSL_CTX* ctx) : Transport(fd) {
  if (ctx == nullptr) return;
  ssl_ = SSL_new(ctx);
  if (ssl_ != nullptr && SSL_set_fd(ssl_, fd) != 1) {
    SSL_free(ssl_);
    ssl_ = nullptr;
  }
}

TlsTransport::~TlsTransport() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  ERR_clear_error();  // the error queue is per thread: leave nothing for the next task
}

ssize_t TlsTransport::retry_or_fail(int ret, Clock::time_point until) {
  const int error = SSL_get_error(ssl_, ret);
  short events = 0;
  if (error == SSL_ERROR_WANT_READ) events = POLLIN;
  if (error == SSL_ERROR_WANT_WRITE) events = POLLOUT;
  if (events == 0) {
    if (error == SSL_ERROR_ZERO_RETURN) return kPeerClosed;  // the peer's close_notify
    broken_ = true;
    return kIoError;
  }
  const int ready = wait_fd(fd_, events, until);
  if (ready > 0) return kRetry;
  return ready == 0 ? kTimedOut : kIoError;
}

TlsTransport::Handshake TlsTransport::handshake_step() {
  if (ssl_ == nullptr || broken_) return Handshake::Failed;
  if (established_) return Handshake::Done;
  ERR_clear_error();
  const int r = SSL_accept(ssl_);
  if (r == 1) {
    established_ = true;
    return Handshake::Done;
  }
  const int error = SSL_get_error(ssl_, r);
  if (error == SSL_ERROR_WANT_READ) return Handshake::WantRead;
  if (error == SSL_ERROR_WANT_WRITE) return Handshake::WantWrite;
  broken_ = true;
  ERR_clear_error();
  return Handshake::Failed;
}

ssize_t TlsTransport::read_some(char* buf, std::size_t n, Clock::time_point until) {
  while (true) {
    ERR_clear_error();
    const int r = SSL_read(ssl_, buf, clamp_int(n));
    if (r > 0) return r;
    const ssize_t next = retry_or_fail(r, until);
    if (next != kRetry) return next;
  }
}

ssize_t TlsTransport::write_some(const char* buf, std::size_t n, Clock::time_point until) {
  while (true) {
    // A write that has to wait is retried with the same buffer and length, as
    // OpenSSL requires.
    ERR_clear_error();
    const int r = SSL_write(ssl_, buf, clamp_int(n));
    if (r > 0) return r;
    const ssize_t next = retry_or_fail(r, until);
    if (next == kRetry) continue;
    broken_ = true;  // a record may be half sent: nothing more goes on this session
    return next == kPeerClosed ? kIoError : next;
  }
}

bool TlsTransport::has_pending() const {
  return ssl_ != nullptr && SSL_pending(ssl_) > 0;
}

void TlsTransport::say_goodbye() {
  if (ssl_ == nullptr || !established_ || broken_) return;
  // One try: the close_notify goes out if the socket takes it; waiting for the
  // peer's answer would only hold the worker.
  ERR_clear_error();
  SSL_shutdown(ssl_);
}

}  // namespace gpulens::http
