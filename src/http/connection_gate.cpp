// SPDX-License-Identifier: Apache-2.0
#include "http/connection_gate.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

namespace gpulens::http {
namespace {

constexpr std::chrono::milliseconds kTick{50};  // how often stop and deadlines are checked

int ms_until(Clock::time_point t) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(t - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, kTick.count()));
}

}  // namespace

ConnectionGate::ConnectionGate(const ConnectionLimits& limits, std::size_t workers,
                               const std::atomic<int>& listening, ProcessRequest process)
    : limits_(limits),
      workers_(std::max<std::size_t>(1, workers)),
      listening_(listening),
      process_(std::move(process)) {}

ConnectionGate::~ConnectionGate() {
  stopping_ = true;
  ready_cv_.notify_all();
  if (wake_fd_ >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
  }
  if (poller_.joinable()) poller_.join();
  for (auto& t : threads_) t.join();
  close_all();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void ConnectionGate::start_threads() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  poller_ = std::thread([this] { loop(); });
  for (std::size_t i = 0; i < workers_; ++i) threads_.emplace_back([this] { work(); });
}

void ConnectionGate::adopt(int fd) {
  std::call_once(started_, [this] { start_threads(); });
  auto conn = std::make_unique<Conn>();
  conn->transport = std::make_unique<PlainTransport>(fd);
  // The first request's deadline runs from the connection's start; one that
  // sends nothing within a read time-out is closed without an answer.
  conn->since = Clock::now();
  conn->request_deadline = conn->since + limits_.request_timeout;
  conn->deadline = std::min(conn->request_deadline, conn->since + limits_.read_timeout);
  watch(std::move(conn));
}

void ConnectionGate::adopt_tls(int fd, SSL_CTX* ctx) {
  std::call_once(started_, [this] { start_threads(); });
  auto conn = std::make_unique<Conn>();
  auto tls = std::make_unique<TlsTransport>(fd, ctx);
  conn->handshaking = tls.get();
  conn->transport = std::move(tls);
  // The handshake has one deadline however its bytes come (a byte a second
  // would otherwise renew a per-read one); the first request's runs on from
  // the connection's start, handshake included.
  conn->since = Clock::now();
  conn->request_deadline = conn->since + limits_.request_timeout;
  conn->deadline = std::min(conn->request_deadline, conn->since + limits_.handshake_timeout);
  watch(std::move(conn));
}

bool ConnectionGate::shed_oldest(std::size_t count, std::chrono::milliseconds wait) {
  if (wake_fd_ < 0) return false;
  std::unique_lock lock(mutex_);
  // Connections adopted but not yet taken in by the epoll thread hold
  // descriptors too: counting only those already waiting, a busy epoll thread
  // made accept's EMFILE look like "nothing to shed", and the listener closed
  // the next connection of the backlog (a scrape) unanswered.
  if (waiting_count_.load() == 0 && incoming_.empty()) return false;
  shed_asked_ += count;
  const std::size_t ticket = shed_asked_;
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
  return shed_cv_.wait_for(lock, wait, [&] { return shed_done_ >= ticket || stopping_; }) &&
         !stopping_;
}

void ConnectionGate::watch(std::unique_ptr<Conn> conn) {
  {
    std::lock_guard lock(mutex_);
    incoming_.push_back(std::move(conn));
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
}

void ConnectionGate::loop() {
  std::vector<epoll_event> events(256);
  while (!stopping_ && listening_.load() != -1) {
    auto next = Clock::now() + kTick;
    for (const auto& [fd, c] : waiting_) next = std::min(next, c->deadline);
    const int n =
        ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), ms_until(next));
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<std::size_t>(i)].data.fd;
      if (fd == wake_fd_) {
        std::uint64_t count = 0;
        [[maybe_unused]] const auto r = ::read(wake_fd_, &count, sizeof count);
        continue;
      }
      on_ready(fd);
    }
    std::deque<std::unique_ptr<Conn>> incoming;
    std::size_t shed = 0;
    {
      std::lock_guard lock(mutex_);
      incoming.swap(incoming_);
      shed = shed_asked_ - shed_done_;
    }
    // Taken in first, so that a shed can close them as well.
    for (auto& c : incoming) receive(std::move(c));
    if (shed > 0) {
      for (std::size_t i = 0; i < shed && !waiting_.empty(); ++i) evict_oldest();
      {
        std::lock_guard lock(mutex_);
        shed_done_ += shed;
      }
      shed_cv_.notify_all();
    }
    expire();
    waiting_count_ = waiting_.size();
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_cv_.notify_all();
  shed_cv_.notify_all();
}

// A connection adopted or handed back by a worker starts waiting.
void ConnectionGate::receive(std::unique_ptr<Conn> c) {
  const int fd = c->transport->fd();
  if (waiting_.size() >= kMaxOpen) evict_oldest();
  const bool handshaking = c->handshaking != nullptr;
  waiting_[fd] = std::move(c);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  if (handshaking) return;  // nothing to read before the client's first bytes
  // A pipelined request may already be complete in the buffer.
  if (head_ends(waiting_[fd]->state.buffered)) {
    dispatch(fd);
  } else {
    on_readable(fd);  // bytes may have come while no one watched
  }
}

void ConnectionGate::on_ready(int fd) {
  const auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  if (it->second->handshaking != nullptr) return on_handshake(fd);
  on_readable(fd);
}

void ConnectionGate::on_handshake(int fd) {
  Conn& c = *waiting_[fd];
  const auto step = c.handshaking->handshake_step();
  if (step == TlsTransport::Handshake::Failed) return close_waiting(fd);
  if (step != TlsTransport::Handshake::Done) {
    // OpenSSL says which way it waits; the socket is watched for that alone.
    epoll_event ev{};
    ev.events = (step == TlsTransport::Handshake::WantWrite ? EPOLLOUT : EPOLLIN) | EPOLLRDHUP;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
    return;
  }
  c.handshaking = nullptr;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
  // Now a connection like any other, waiting for its first request within
  // what is left of the first request's deadline.
  c.deadline = std::min(c.request_deadline, Clock::now() + limits_.read_timeout);
  on_readable(fd);  // the request may have come in the handshake's last flight
}

void ConnectionGate::close_waiting(int fd) {
  const auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  finish_connection(*it->second->transport, false);
  waiting_.erase(it);
}

void ConnectionGate::on_readable(int fd) {
  const auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  Conn& c = *it->second;
  char chunk[4096];
  while (true) {
    // Non-blocking: a time in the past means "what is there now".
    const ssize_t n = c.transport->read_some(chunk, sizeof chunk, Clock::time_point{});
    if (n > 0) {
      const auto now = Clock::now();
      if (c.idle && c.state.served > 0) c.request_deadline = now + limits_.request_timeout;
      c.idle = false;
      // Each wait for more bytes is bounded too, within the request's deadline.
      c.deadline = std::min(c.request_deadline, now + limits_.read_timeout);
      c.state.buffered.append(chunk, static_cast<std::size_t>(n));
      if (c.state.buffered.size() >= limits_.max_head_bytes || head_ends(c.state.buffered)) {
        return dispatch(fd);
      }
      continue;
    }
    if (n == kTimedOut) return;  // nothing more for now
    // Closed or failed: a partial head still hears why (400), silence just closes.
    if (c.state.buffered.empty()) return close_waiting(fd);
    return dispatch(fd);
  }
}

void ConnectionGate::dispatch(int fd) {
  const auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  {
    std::lock_guard lock(mutex_);
    ready_.push_back(std::move(it->second));
  }
  waiting_.erase(it);
  ready_cv_.notify_one();
}

void ConnectionGate::expire() {
  const auto now = Clock::now();
  std::vector<int> due;
  for (const auto& [fd, c] : waiting_) {
    if (c->deadline <= now) due.push_back(fd);
  }
  for (int fd : due) {
    auto& c = waiting_[fd];
    if (c->idle) {  // between requests, or in the handshake: close quietly
      close_waiting(fd);
    } else {
      c->timed_out = true;
      dispatch(fd);  // a worker answers 408 at once
    }
  }
}

void ConnectionGate::evict_oldest() {
  auto oldest = waiting_.begin();
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (it->second->since < oldest->second->since) oldest = it;
  }
  if (oldest == waiting_.end()) return;
  close_waiting(oldest->first);
}

void ConnectionGate::work() {
  while (true) {
    std::unique_ptr<Conn> conn;
    {
      std::unique_lock lock(mutex_);
      ready_cv_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
      if (ready_.empty()) return;
      conn = std::move(ready_.front());
      ready_.pop_front();
    }
    // A timed-out head gets its 408 without another wait for bytes.
    const auto deadline = conn->timed_out ? Clock::now() : conn->request_deadline;
    const auto after =
        serve_one_request(*conn->transport, limits_, deadline, conn->state, process_);
    if (after != AfterRequest::KeepAlive || stopping_ || listening_.load() == -1) {
      finish_connection(*conn->transport, after == AfterRequest::CloseLinger);
      continue;
    }
    conn->idle = true;
    conn->since = Clock::now();
    conn->deadline = conn->since + limits_.keep_alive_timeout;
    watch(std::move(conn));
  }
}

void ConnectionGate::close_all() {
  for (auto& [fd, c] : waiting_) finish_connection(*c->transport, false);
  waiting_.clear();
  for (auto* queue : {&ready_, &incoming_}) {
    for (auto& c : *queue) finish_connection(*c->transport, false);
    queue->clear();
  }
}

}  // namespace gpulens::http
