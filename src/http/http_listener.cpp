// SPDX-License-Identifier: Apache-2.0
#include "http/http_listener.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <thread>

namespace gpulens::http {

HttpListener::HttpListener(ConnectionLimits limits, std::size_t workers, ProcessRequest process)
    : limits_(std::move(limits)),
      workers_(std::max<std::size_t>(1, workers)),
      process_(std::move(process)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      reserve_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {}

HttpListener::~HttpListener() {
  stop();
  // Their threads use limits_, process_ and ssl_ctx_: they end first.
  gate_.reset();
  if (socket_ >= 0) ::close(socket_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
  if (ssl_ctx_ != nullptr) SSL_CTX_free(ssl_ctx_);
}

bool HttpListener::enable_tls(const std::function<bool(SSL_CTX&)>& setup) {
  ssl_ctx_ = SSL_CTX_new(TLS_server_method());
  if (ssl_ctx_ == nullptr) return false;
  SSL_CTX_set_options(ssl_ctx_,
                      SSL_OP_NO_COMPRESSION | SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
  if (!setup(*ssl_ctx_)) {
    SSL_CTX_free(ssl_ctx_);
    ssl_ctx_ = nullptr;
    return false;
  }
  return true;
}

int HttpListener::bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    errno = rc == EAI_SYSTEM ? errno : EADDRNOTAVAIL;
    return -1;
  }
  int fd = -1;
  int error = EADDRNOTAVAIL;
  for (auto* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    // A restarted agent binds again while its old connections sit in TIME_WAIT.
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      error = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    errno = error;
    return -1;
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  socket_ = fd;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

void HttpListener::listen() {
  if (socket_ < 0 || stop_requested_) return;
  listening_ = socket_;
  // OpenSSL writes with write(2), which raises SIGPIPE on a connection the
  // client has reset: an error to report, not a reason to end the agent.
  if (ssl_ctx_ != nullptr) std::signal(SIGPIPE, SIG_IGN);
  gate_ = std::make_unique<ConnectionGate>(limits_, workers_, listening_, process_);
  while (!stop_requested_) {
    pollfd fds[2] = {{socket_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) break;
    if ((fds[0].revents & (POLLERR | POLLNVAL)) != 0) break;  // the socket itself failed
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(socket_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) out_of_descriptors();
      // Out of memory: the backlog waits a moment rather than spinning.
      if (errno == ENOBUFS || errno == ENOMEM)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    // Answers go out in one write, which need not wait for the client's ACK.
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (ssl_ctx_ != nullptr)
      gate_->adopt_tls(fd, ssl_ctx_);
    else
      gate_->adopt(fd);
  }
  listening_ = -1;
}

void HttpListener::out_of_descriptors() {
  // The connections that have waited longest (idle, or dribbling a head) give
  // their descriptors to those in the backlog, a scrape among them. Several at
  // a time: behind a thousand idle sockets in the backlog, one per accept was
  // a round trip to the epoll thread each, a second in all.
  constexpr std::size_t kShedAtOnce = 32;
  if (gate_->shed_oldest(kShedAtOnce, std::chrono::milliseconds(500))) return;
  // Nothing waiting to close: every descriptor is in use elsewhere. The spare
  // one lets the connection be taken and closed at once, so that the backlog
  // does not wake this loop again and again while it stays full.
  if (reserve_fd_ < 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return;
  }
  ::close(reserve_fd_);
  const int fd = ::accept4(socket_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) ::close(fd);
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void HttpListener::stop() {
  stop_requested_ = true;
  listening_ = -1;
  if (wake_fd_ >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
  }
}

}  // namespace gpulens::http
