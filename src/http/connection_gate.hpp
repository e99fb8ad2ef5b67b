// SPDX-License-Identifier: Apache-2.0
#pragma once
// Waits for requests without holding worker threads. A server that gives each
// connection a worker from accept to close (as cpp-httplib, which the agent used
// to be built on, did) lets eight clients that send a byte a second (or nothing
// at all) take all eight workers, and every scrape waits behind them for the
// whole request deadline. Here one thread watches every
// open connection with epoll and reads what arrives, each connection within its
// own deadline; only a connection whose request head is complete (or that broke
// a limit and must be answered) goes to a worker, which answers that one request
// and hands the connection back. Idle and slow clients cost a descriptor and a
// buffer, never a worker. TLS connections wait here too, from their first byte:
// the handshake is driven step by step as the socket becomes ready, within its
// own deadline, so clients that connect and stop (or send half a ClientHello)
// hold no worker either.
#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "http/http_connection.hpp"

namespace gpulens::http {

class ConnectionGate {
 public:
  // `listening` is the listening socket (HttpListener): -1 once the server stops.
  ConnectionGate(const ConnectionLimits& limits, std::size_t workers,
                 const std::atomic<int>& listening, ProcessRequest process);
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Takes an accepted plain connection; returns at once.
  void adopt(int fd);
  // Takes an accepted connection whose TLS handshake (with `ctx`) is still to come.
  void adopt_tls(int fd, SSL_CTX* ctx);

  // Out of descriptors (accept failed with EMFILE): closes the `count`
  // connections that have waited longest, so that those in the backlog (a
  // scrape among them) can be taken. Waits at most `wait` for the epoll thread
  // to do it; false when there was nothing to close.
  bool shed_oldest(std::size_t count, std::chrono::milliseconds wait);

  // Connections open at most (oldest waiting ones are closed beyond it).
  static constexpr std::size_t kMaxOpen = 4096;

 private:
  struct Conn {
    std::unique_ptr<Transport> transport;
    TlsTransport* handshaking = nullptr;  // the transport, while its handshake is under way
    ConnectionState state;
    Clock::time_point deadline;          // give up waiting (idle: close; partial head: 408)
    Clock::time_point request_deadline;  // the whole request, from its first byte
    Clock::time_point since;             // when it started waiting
    bool idle = true;                    // no byte of the next request yet
    bool timed_out = false;              // dispatched because `deadline` passed
  };

  void start_threads();
  void loop();
  void work();
  void watch(std::unique_ptr<Conn> conn);  // any thread: back to the epoll thread
  void on_ready(int fd);
  void on_readable(int fd);
  void on_handshake(int fd);
  void close_waiting(int fd);
  void receive(std::unique_ptr<Conn> conn);
  void dispatch(int fd);
  void expire();
  void evict_oldest();
  void close_all();

  const ConnectionLimits& limits_;
  std::size_t workers_;
  const std::atomic<int>& listening_;
  ProcessRequest process_;

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::once_flag started_;
  std::atomic<bool> stopping_{false};
  std::thread poller_;
  std::vector<std::thread> threads_;

  std::map<int, std::unique_ptr<Conn>> waiting_;  // epoll thread only
  std::atomic<std::size_t> waiting_count_{0};     // waiting_.size(), for shed_oldest()

  std::mutex mutex_;
  std::condition_variable ready_cv_;
  std::deque<std::unique_ptr<Conn>> ready_;     // heads complete: for the workers
  std::deque<std::unique_ptr<Conn>> incoming_;  // adopted or handed back: for epoll
  std::size_t shed_asked_ = 0;                  // shed_oldest() calls, and those done
  std::size_t shed_done_ = 0;
  std::condition_variable shed_cv_;
};

}  // namespace gpulens::http
