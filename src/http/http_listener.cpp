// SPDX-License-Identifier: Apache-2.0
#include "http/http_listener.hpp"

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
#include <condition_variable>
#include <csignal>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace gpulens::server {

// TLS connections, each served from its handshake to its close by one worker:
// OpenSSL's session state makes handing a connection between threads (as the
// plain gate does) not worth its complexity for an endpoint Prometheus scrapes.
class TlsWorkers {
 public:
  TlsWorkers(std::size_t count, SSL_CTX* ctx, const ConnectionLimits& limits,
             const std::atomic<int>& listening, const ProcessRequest& process)
      : ctx_(ctx), limits_(limits), listening_(listening), process_(process) {
    for (std::size_t i = 0; i < count; ++i) threads_.emplace_back([this] { work(); });
  }

  ~TlsWorkers() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    for (const int fd : queue_) ::close(fd);
  }

  void push(int fd) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(fd);
    }
    cv_.notify_one();
  }

 private:
  void work() {
    while (true) {
      int fd = -1;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        fd = queue_.front();
        queue_.pop_front();
      }
      // The handshake counts against the first request's deadline.
      const auto deadline = Clock::now() + limits_.request_timeout;
      TlsTransport transport(fd, ctx_);
      bool linger = false;
      if (transport.accept(deadline, limits_.read_timeout))
        linger = serve_connection(transport, limits_, deadline, listening_, process_);
      finish_connection(transport, linger);
    }
  }

  SSL_CTX* ctx_;
  const ConnectionLimits& limits_;
  const std::atomic<int>& listening_;
  const ProcessRequest& process_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<int> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

HttpListener::HttpListener(ConnectionLimits limits, std::size_t workers, ProcessRequest process)
    : limits_(std::move(limits)),
      workers_(std::max<std::size_t>(1, workers)),
      process_(std::move(process)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

HttpListener::~HttpListener() {
  stop();
  // Their threads use limits_, process_ and ssl_ctx_: they end first.
  gate_.reset();
  tls_workers_.reset();
  if (socket_ >= 0) ::close(socket_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
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
  if (ssl_ctx_ != nullptr) {
    // OpenSSL writes with write(2), which raises SIGPIPE on a connection the
    // client has reset: an error to report, not a reason to end the agent.
    std::signal(SIGPIPE, SIG_IGN);
    tls_workers_ = std::make_unique<TlsWorkers>(workers_, ssl_ctx_, limits_, listening_, process_);
  } else {
    gate_ = std::make_unique<ConnectionGate>(limits_, workers_, listening_, process_);
  }
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
      // Out of descriptors: the backlog waits a moment rather than spinning.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    // Answers go out in one write, which need not wait for the client's ACK.
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (tls_workers_)
      tls_workers_->push(fd);
    else
      gate_->adopt(fd);
  }
  listening_ = -1;
}

void HttpListener::stop() {
  stop_requested_ = true;
  listening_ = -1;
  if (wake_fd_ >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
  }
}

}  // namespace gpulens::server
